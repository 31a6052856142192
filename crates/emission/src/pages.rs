//! A hint for the kernel on the large buffers of a block (its 34 MB of
//! ticket records, its 9.6 MB of leaves, the tree's wide levels): back them
//! with transparent huge pages where the system allows it
//! (`/sys/kernel/mm/transparent_hugepage/enabled` set to `madvise` or
//! `always`), so that filling them faults 2 MiB at a time instead of 4 KiB.
//! Without the hint a block's first touch of its memory is about a fifth
//! of its CPU time, in the kernel (BENCHMARKS.md).
//!
//! It changes no byte of anything: a hint the kernel may ignore, whose
//! failure is ignored too. Elsewhere than Linux it does nothing.

/// Transparent huge pages are 2 MiB on x86-64 and most aarch64 kernels.
#[cfg(target_os = "linux")]
const HUGE_PAGE: usize = 2 << 20;

/// Advises huge pages for the whole 2 MiB pages inside `buf`, memory best
/// not touched yet (a fresh vector's spare capacity, or a zeroed one the
/// allocator mapped but did not write). Smaller buffers are left alone.
pub(crate) fn advise_huge<T>(buf: &mut [T]) {
    #[cfg(target_os = "linux")]
    {
        let start = buf.as_mut_ptr() as usize;
        let end = start + std::mem::size_of_val(buf);
        let (from, to) = (start.next_multiple_of(HUGE_PAGE), end / HUGE_PAGE * HUGE_PAGE);
        if to > from {
            // SAFETY: `[from, to)` lies inside `buf`, memory this function
            // borrows mutably, and is page-aligned as `madvise` requires.
            // MADV_HUGEPAGE changes neither the content nor the protection
            // of any page, only how the kernel may back them; an error
            // (EINVAL where THP is not built in) leaves them as they were.
            unsafe {
                libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = buf;
}

/// `vec![[0; 32]; len]` (zeroed memory the allocator maps untouched, for
/// large lengths), advised as huge pages before anything is written.
pub(crate) fn zeroed_hashes(len: usize) -> Vec<[u8; 32]> {
    let mut v = vec![[0u8; 32]; len];
    advise_huge(&mut v);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::MaybeUninit;

    #[test]
    fn the_hint_changes_no_content() {
        for len in [0, 1, 4095, 1 << 17, 300_000] {
            let mut v = zeroed_hashes(len);
            assert_eq!(v.len(), len);
            assert!(v.iter().all(|h| *h == [0; 32]));
            v.iter_mut().enumerate().for_each(|(i, h)| *h = [i as u8; 32]);
            advise_huge(&mut v);
            assert!(v.iter().enumerate().all(|(i, h)| *h == [i as u8; 32]));
        }
        let mut v: Vec<[u8; 32]> = Vec::with_capacity(300_000);
        advise_huge::<MaybeUninit<[u8; 32]>>(v.spare_capacity_mut());
        v.extend((0..300_000u32).map(|i| [i as u8; 32]));
        assert!(v.iter().enumerate().all(|(i, h)| h[0] == i as u8 && h[31] == i as u8));
    }
}
