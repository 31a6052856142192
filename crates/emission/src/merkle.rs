//! The commitment of a block: a Merkle tree over its tickets in sale order
//! (guarantee 6).
//!
//! - leaf: `SHA-256(0x00 || ticket bytes)` (the ticket bytes are
//!   [`TicketRecord::leaf_bytes`](crate::TicketRecord::leaf_bytes));
//! - node: `SHA-256(0x01 || left || right)`.
//!
//! The prefixes keep a leaf from ever passing for a node. Each level pairs
//! its hashes from the left; an **odd last hash is promoted unchanged** to
//! the next level (it is not paired with itself, so no two different lists
//! of leaves share a root the way Bitcoin's duplicated last node allows).
//! The root is the one hash left. A tree has at least one leaf; the root of
//! one leaf is that leaf's hash.
//!
//! A [`MerkleProof`] lists, from the leaf up, each sibling and the side it
//! sits on; promoted levels contribute no step.
//!
//! **Chunks.** Because levels pair from the left, the node at level `k`
//! and index `i` is the root of leaves `i 2^k .. (i + 1) 2^k` (of fewer,
//! for the last one), built by the same rules. So a server keeps only the
//! roots of chunks of [`CHUNK_LEAVES`] leaves ([`chunk_roots`]): the tree
//! over those roots is the top of the block's tree, and a ticket's proof is
//! its proof inside its chunk (recomputed from the chunk's 1 024 rows)
//! followed by its chunk's proof among the chunk roots ([`chunk_proof`]).

use crate::sha256x;
use sha2::{Digest, Sha256};
use std::fmt;

/// A SHA-256 hash.
pub type Hash = [u8; 32];

/// `SHA-256(0x00 || bytes)`.
pub fn leaf_hash(bytes: &[u8]) -> Hash {
    Sha256::new().chain_update([0u8]).chain_update(bytes).finalize().into()
}

/// `SHA-256(0x01 || left || right)`.
fn node_hash(left: &Hash, right: &Hash) -> Hash {
    let mut buf = [0u8; 65];
    buf[0] = 1;
    buf[1..33].copy_from_slice(left);
    buf[33..].copy_from_slice(right);
    Sha256::digest(buf).into()
}

/// The next level up: pairs hashed, an odd last hash promoted.
fn parent_level(level: &[Hash]) -> Vec<Hash> {
    level
        .chunks(2)
        .map(|pair| match pair {
            [l, r] => node_hash(l, r),
            [one] => *one,
            _ => unreachable!("chunks of two"),
        })
        .collect()
}

/// [`node_hash`] of four pairs at once (`pairs` is left, right, left,
/// right...), their SHA-256 interleaved ([`crate::sha256x`]): a node's
/// 65 bytes are two blocks, `0x01 || left || right[..31]` and
/// `right[31]` with the padding.
fn node_hashes(pairs: &[Hash; 2 * NODE_LANES]) -> [Hash; NODE_LANES] {
    let mut blocks = [[[0u8; 64]; 2]; NODE_LANES];
    for (b, pair) in blocks.iter_mut().zip(pairs.chunks_exact(2)) {
        let flat = b.as_flattened_mut();
        flat[0] = 1;
        flat[1..33].copy_from_slice(&pair[0]);
        flat[33..65].copy_from_slice(&pair[1]);
        sha256x::pad_in_place(flat, 65);
    }
    let mut states = [sha256x::IV; NODE_LANES];
    sha256x::compress(&mut states, std::array::from_fn(|j| &blocks[j][..]));
    states.map(|s| sha256x::output(&s))
}

/// Nodes hashed together by [`node_hashes`].
const NODE_LANES: usize = 4;

/// Writes into `out` the parents of `level` ([`parent_level`]'s), the
/// pairs hashed [`NODE_LANES`] at a time.
fn parents_into(out: &mut [Hash], level: &[Hash]) {
    debug_assert_eq!(out.len(), level.len().div_ceil(2));
    let whole = level.len() / (2 * NODE_LANES) * NODE_LANES;
    let (lanes, rest) = out.split_at_mut(whole);
    for (o, pairs) in lanes.chunks_exact_mut(NODE_LANES).zip(level.chunks_exact(2 * NODE_LANES)) {
        o.copy_from_slice(&node_hashes(pairs.try_into().expect("chunks of eight")));
    }
    for (o, pair) in rest.iter_mut().zip(level[2 * whole..].chunks(2)) {
        *o = match pair {
            [l, r] => node_hash(l, r),
            [one] => *one,
            _ => unreachable!("chunks of two"),
        };
    }
}

/// [`parent_level`] on up to `threads` threads, the pairs hashed four at a
/// time ([`parents_into`]): each thread makes the parents of a contiguous,
/// even-sized run of the level, so the result is the same.
fn parent_level_threads(level: &[Hash], threads: usize) -> Vec<Hash> {
    let mut next = crate::pages::zeroed_hashes(level.len().div_ceil(2));
    if threads <= 1 || level.len() < PARALLEL_MIN {
        parents_into(&mut next, level);
        return next;
    }
    // Runs of whole lane groups, so that only the last one has a remainder.
    let per_thread = next.len().div_ceil(threads).next_multiple_of(NODE_LANES);
    std::thread::scope(|s| {
        for (out, pairs) in next.chunks_mut(per_thread).zip(level.chunks(2 * per_thread)) {
            s.spawn(move || parents_into(out, pairs));
        }
    });
    next
}

/// Levels narrower than this are hashed on one thread.
const PARALLEL_MIN: usize = 4096;

/// The whole tree, kept to answer proofs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MerkleTree {
    /// `levels[0]` are the leaves, the last level is `[root]`.
    levels: Vec<Vec<Hash>>,
}

impl MerkleTree {
    /// Builds the tree. Panics on no leaves: a block has at least one ticket.
    pub fn new(leaves: Vec<Hash>) -> MerkleTree {
        assert!(!leaves.is_empty(), "a Merkle tree needs at least one leaf");
        let mut levels = vec![leaves];
        while levels.last().expect("non-empty").len() > 1 {
            let next = parent_level(levels.last().expect("non-empty"));
            levels.push(next);
        }
        MerkleTree { levels }
    }

    /// [`MerkleTree::new`], its nodes hashed four at a time and its wide
    /// levels on up to `threads` threads (the same tree).
    pub fn with_threads(leaves: Vec<Hash>, threads: usize) -> MerkleTree {
        assert!(!leaves.is_empty(), "a Merkle tree needs at least one leaf");
        let mut levels = vec![leaves];
        while levels.last().expect("non-empty").len() > 1 {
            let next = parent_level_threads(levels.last().expect("non-empty"), threads);
            levels.push(next);
        }
        MerkleTree { levels }
    }

    pub fn root(&self) -> Hash {
        self.levels.last().expect("non-empty")[0]
    }

    pub fn leaves(&self) -> &[Hash] {
        &self.levels[0]
    }

    /// The inclusion proof of leaf `index` (from 0), if there is one.
    pub fn proof(&self, index: usize) -> Option<MerkleProof> {
        if index >= self.levels[0].len() {
            return None;
        }
        let mut steps = Vec::new();
        let mut i = index;
        for level in &self.levels[..self.levels.len() - 1] {
            let sibling = i ^ 1;
            if sibling < level.len() {
                let side = if i.is_multiple_of(2) { Side::Right } else { Side::Left };
                steps.push(Step { side, hash: level[sibling] });
            }
            i /= 2;
        }
        Some(MerkleProof { steps })
    }
}

impl MerkleTree {
    /// Appends the text of [`MerkleTree::proof`]`(index)` (see
    /// [`MerkleProof`]'s `Display`) to `out`; nothing for no such leaf.
    pub fn write_proof(&self, index: usize, out: &mut Vec<u8>) {
        if index >= self.levels[0].len() {
            return;
        }
        let mut i = index;
        let mut first = true;
        for level in &self.levels[..self.levels.len() - 1] {
            let sibling = i ^ 1;
            if sibling < level.len() {
                if !first {
                    out.push(b'.');
                }
                first = false;
                out.push(if i.is_multiple_of(2) { b'R' } else { b'L' });
                let mut hex = [0u8; 64];
                hex::encode_to_slice(level[sibling], &mut hex).expect("64 hex digits for 32 bytes");
                out.extend_from_slice(&hex);
            }
            i /= 2;
        }
    }
}

/// The root of `leaves` without keeping the tree.
pub fn merkle_root(leaves: Vec<Hash>) -> Hash {
    assert!(!leaves.is_empty(), "a Merkle tree needs at least one leaf");
    let mut level = leaves;
    while level.len() > 1 {
        level = parent_level_threads(&level, 1);
    }
    level[0]
}

/// Leaves per chunk of [`chunk_roots`]: 300 000 tickets make 293 chunks.
pub const CHUNK_LEAVES: usize = 1024;

/// The roots of `leaves` taken `chunk` at a time (`chunk` a power of two).
pub fn chunk_roots(leaves: &[Hash], chunk: usize) -> Vec<Hash> {
    assert!(chunk.is_power_of_two(), "chunks of a power of two leaves");
    leaves.chunks(chunk).map(|c| merkle_root(c.to_vec())).collect()
}

/// The proof of leaf `index` (from 0, in the whole tree) from the leaves
/// of its chunk and the roots of every chunk ([`chunk_roots`] with the same
/// `chunk`); `None` when they do not fit together.
pub fn chunk_proof(chunk_leaves: Vec<Hash>, chunk_roots: &[Hash], chunk: usize, index: usize) -> Option<MerkleProof> {
    let (c, i) = (index / chunk, index % chunk);
    if chunk_leaves.is_empty() || chunk_leaves.len() > chunk || c >= chunk_roots.len() {
        return None;
    }
    let inner = MerkleTree::new(chunk_leaves);
    if inner.root() != chunk_roots[c] {
        return None;
    }
    let mut proof = inner.proof(i)?;
    proof.steps.extend(MerkleTree::new(chunk_roots.to_vec()).proof(c)?.steps);
    Some(proof)
}

/// Which side a sibling sits on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Left,
    Right,
}

/// One step up: hash with `hash` on `side`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub side: Side,
    pub hash: Hash,
}

/// The path from a leaf to the root.
///
/// Written as text (in CSV files) as its steps joined by `.`, each an `L`
/// or `R` (the sibling's side) and 64 hex digits; a one-ticket block's
/// proof is the empty text.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct MerkleProof {
    pub steps: Vec<Step>,
}

/// A proof's text is not steps of `L`/`R` and 64 hex digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a Merkle proof is steps like R<64 hex>.L<64 hex>; step {0} is not")]
pub struct ProofParseError(pub usize);

impl MerkleProof {
    /// Whether `leaf` (a leaf hash) climbs to `root` along this proof.
    pub fn verify(&self, leaf: &Hash, root: &Hash) -> bool {
        let top = self.steps.iter().fold(*leaf, |h, s| match s.side {
            Side::Left => node_hash(&s.hash, &h),
            Side::Right => node_hash(&h, &s.hash),
        });
        &top == root
    }

    pub fn parse(s: &str) -> Result<MerkleProof, ProofParseError> {
        if s.is_empty() {
            return Ok(MerkleProof::default());
        }
        let steps = s
            .split('.')
            .enumerate()
            .map(|(i, part)| {
                let side = match part.as_bytes().first() {
                    Some(b'L') => Side::Left,
                    Some(b'R') => Side::Right,
                    _ => return Err(ProofParseError(i + 1)),
                };
                let mut hash = [0u8; 32];
                hex::decode_to_slice(&part[1..], &mut hash).map_err(|_| ProofParseError(i + 1))?;
                Ok(Step { side, hash })
            })
            .collect::<Result<_, _>>()?;
        Ok(MerkleProof { steps })
    }
}

impl fmt::Display for MerkleProof {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.steps.iter().enumerate() {
            let side = match s.side {
                Side::Left => 'L',
                Side::Right => 'R',
            };
            let sep = if i == 0 { "" } else { "." };
            write!(f, "{sep}{side}{}", hex::encode(s.hash))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaves(n: usize) -> Vec<Hash> {
        (0..n).map(|i| leaf_hash(&(i as u32).to_be_bytes())).collect()
    }

    #[test]
    fn hashes_are_domain_separated_sha256() {
        // SHA-256 of the single byte 0x00, from the standard's test tools:
        // printf '\x00' | sha256sum
        assert_eq!(hex::encode(leaf_hash(b"")), "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d");
        let (a, b) = (leaf_hash(b"a"), leaf_hash(b"b"));
        let mut cat = vec![1u8];
        cat.extend_from_slice(&a);
        cat.extend_from_slice(&b);
        assert_eq!(node_hash(&a, &b), <[u8; 32]>::from(Sha256::digest(&cat)));
        assert_ne!(node_hash(&a, &b), node_hash(&b, &a));
    }

    #[test]
    fn odd_nodes_are_promoted_unchanged() {
        let l = leaves(3);
        let t = MerkleTree::new(l.clone());
        assert_eq!(t.root(), node_hash(&node_hash(&l[0], &l[1]), &l[2]));
        let l5 = leaves(5);
        let expect = node_hash(&node_hash(&node_hash(&l5[0], &l5[1]), &node_hash(&l5[2], &l5[3])), &l5[4]);
        assert_eq!(merkle_root(l5.clone()), expect);
        assert_eq!(MerkleTree::new(l5).root(), expect);
        assert_eq!(merkle_root(leaves(1)), leaves(1)[0]);
        // No duplication: [a, b, c] and [a, b, c, c] differ.
        let mut four = leaves(3);
        four.push(four[2]);
        assert_ne!(merkle_root(four), merkle_root(leaves(3)));
    }

    #[test]
    fn every_proof_verifies_for_every_size_up_to_40() {
        for n in 1..=40 {
            let l = leaves(n);
            let t = MerkleTree::new(l.clone());
            assert_eq!(t.root(), merkle_root(l.clone()));
            for (i, leaf) in l.iter().enumerate() {
                let p = t.proof(i).unwrap();
                assert!(p.verify(leaf, &t.root()), "leaf {i} of {n}");
                assert_eq!(MerkleProof::parse(&p.to_string()).unwrap(), p);
                if n > 1 {
                    let other = &l[(i + 1) % n];
                    assert!(!p.verify(other, &t.root()), "leaf {i}'s proof must not prove leaf {}", (i + 1) % n);
                }
            }
            assert!(t.proof(n).is_none());
        }
    }

    #[test]
    fn trees_made_on_threads_are_the_same_tree() {
        for n in (1..=40).chain([4095, 4096, 4097, 8191, 8200, 12_345]) {
            let l = leaves(n);
            let one = MerkleTree::new(l.clone());
            for threads in [1, 2, 3, 7] {
                assert_eq!(MerkleTree::with_threads(l.clone(), threads), one, "{n} leaves, {threads} threads");
            }
            assert_eq!(merkle_root(l), one.root(), "{n} leaves");
        }
    }

    #[test]
    fn written_proofs_are_the_proofs_text() {
        for n in [1, 2, 5, 13, 40] {
            let t = MerkleTree::new(leaves(n));
            for i in 0..=n {
                let mut out = b"x".to_vec();
                t.write_proof(i, &mut out);
                let expect = t.proof(i).map_or(String::new(), |p| p.to_string());
                assert_eq!(String::from_utf8(out).unwrap(), format!("x{expect}"), "leaf {i} of {n}");
            }
        }
    }

    #[test]
    fn chunk_proofs_are_the_whole_trees_proofs() {
        for chunk in [1, 2, 4, 8] {
            for n in 1..=70 {
                let l = leaves(n);
                let t = MerkleTree::new(l.clone());
                let roots = chunk_roots(&l, chunk);
                assert_eq!(merkle_root(roots.clone()), t.root(), "{n} leaves in chunks of {chunk}");
                for i in 0..n {
                    let c = i / chunk;
                    let mine = l[c * chunk..((c + 1) * chunk).min(n)].to_vec();
                    assert_eq!(chunk_proof(mine, &roots, chunk, i), t.proof(i), "leaf {i} of {n}, chunks of {chunk}");
                }
                if n > chunk {
                    // Another chunk's leaves do not fit.
                    assert_eq!(chunk_proof(l[chunk..(2 * chunk).min(n)].to_vec(), &roots, chunk, 0), None);
                }
            }
        }
    }

    #[test]
    fn any_flipped_bit_of_leaf_proof_or_root_fails() {
        let l = leaves(13);
        let t = MerkleTree::new(l.clone());
        let root = t.root();
        for i in [0, 6, 11, 12] {
            let p = t.proof(i).unwrap();
            assert!(p.verify(&l[i], &root));
            for byte in 0..32 {
                for bit in 0..8 {
                    let mut leaf = l[i];
                    leaf[byte] ^= 1 << bit;
                    assert!(!p.verify(&leaf, &root));
                    let mut r = root;
                    r[byte] ^= 1 << bit;
                    assert!(!p.verify(&l[i], &r));
                    for s in 0..p.steps.len() {
                        let mut q = p.clone();
                        q.steps[s].hash[byte] ^= 1 << bit;
                        assert!(!q.verify(&l[i], &root));
                    }
                }
            }
            for s in 0..p.steps.len() {
                let mut q = p.clone();
                q.steps[s].side = match q.steps[s].side {
                    Side::Left => Side::Right,
                    Side::Right => Side::Left,
                };
                assert!(!q.verify(&l[i], &root), "side of step {s} flipped");
            }
        }
    }

    #[test]
    fn proof_text_is_refused_when_malformed() {
        assert_eq!(MerkleProof::parse("").unwrap(), MerkleProof::default());
        assert_eq!(MerkleProof::parse("X00"), Err(ProofParseError(1)));
        let good = format!("R{}", "ab".repeat(32));
        assert!(MerkleProof::parse(&good).is_ok());
        assert_eq!(MerkleProof::parse(&format!("{good}.L{}", "ab".repeat(31))), Err(ProofParseError(2)));
    }
}
