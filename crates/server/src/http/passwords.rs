//! Players' passwords: their argon2id hashes and checks, on the blocking
//! pool, a bounded number at once ([`PasswordHashes`]).

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use domain::error::AppError;
use std::sync::OnceLock;
use std::time::Duration;

/// The bound on password hashes: each argon2id hash or verification takes
/// 19 MiB and tens of milliseconds of CPU, so only `permits` run at once
/// (on the blocking pool); the others wait their turn at most `wait`, then
/// are refused with 503 `unavailable` and `Retry-After`. A flood of logins
/// thus holds a bounded memory and leaves the cores' other share to play.
pub struct PasswordHashes {
    permits: tokio::sync::Semaphore,
    wait: Duration,
}

impl PasswordHashes {
    pub fn new(permits: usize, wait: Duration) -> PasswordHashes {
        PasswordHashes { permits: tokio::sync::Semaphore::new(permits.max(1)), wait }
    }

    /// Runs `work` on the blocking pool once a permit is free.
    async fn run<T: Send + 'static>(
        &self,
        what: &'static str,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, AppError> {
        let permit = match tokio::time::timeout(self.wait, self.permits.acquire()).await {
            Ok(Ok(permit)) => permit,
            Ok(Err(_)) => return Err(AppError::internal("the password hashes' semaphore is closed")),
            Err(_) => {
                tracing::warn!("password hashes: none free within {} ms, refused", self.wait.as_millis());
                return Err(AppError::Busy {
                    message: "the server is checking too many passwords at once: try again in a moment".into(),
                    retry_after_s: 1,
                });
            }
        };
        let done = tokio::task::spawn_blocking(work).await;
        drop(permit);
        done.map_err(|e| AppError::internal(format!("{what} task: {e}")))
    }
}

/// The argon2id hash of a password (PHC string), on the blocking pool
/// within the bound of `hashes`.
pub async fn hash_password(hashes: &PasswordHashes, password: String) -> Result<String, AppError> {
    hashes
        .run("password hash", move || {
            let salt = SaltString::encode_b64(&crate::fairness::random_bytes::<16>())
                .map_err(|e| AppError::internal(format!("password salt: {e}")))?;
            Argon2::default()
                .hash_password(password.as_bytes(), &salt)
                .map(|h| h.to_string())
                .map_err(|e| AppError::internal(format!("password hash: {e}")))
        })
        .await?
}

/// Whether `password` matches `hash`, on the blocking pool within the
/// bound of `hashes`. `None` (no such login) still costs one verification,
/// so that the time of the answer does not say whether a login exists.
pub async fn verify_password(
    hashes: &PasswordHashes,
    password: String,
    hash: Option<String>,
) -> Result<bool, AppError> {
    hashes
        .run("password check", move || {
            let known = hash.is_some();
            let hash = hash.unwrap_or_else(|| dummy_hash().to_string());
            let matches = PasswordHash::new(&hash)
                .map(|parsed| Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok())
                .unwrap_or(false);
            known && matches
        })
        .await
}

/// A hash of nothing anybody types, for [`verify_password`]'s unknown logins.
fn dummy_hash() -> &'static str {
    static DUMMY: OnceLock<String> = OnceLock::new();
    DUMMY.get_or_init(|| {
        let salt = SaltString::encode_b64(&[7u8; 16]).expect("a fixed salt encodes");
        Argon2::default().hash_password(b"\0no login\0", &salt).expect("argon2 hashes").to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::answer::HttpError;
    use axum::http::header;
    use axum::response::IntoResponse;

    #[tokio::test]
    async fn a_password_matches_its_argon2id_hash_only() {
        let h = PasswordHashes::new(2, Duration::from_secs(5));
        let hash = hash_password(&h, "correct horse".into()).await.unwrap();
        assert!(hash.starts_with("$argon2id$v=19$"), "{hash}");
        assert!(verify_password(&h, "correct horse".into(), Some(hash.clone())).await.unwrap());
        assert!(!verify_password(&h, "correct horsE".into(), Some(hash.clone())).await.unwrap());
        // Two hashes of one password differ (their salts do).
        assert_ne!(hash, hash_password(&h, "correct horse".into()).await.unwrap());
        // An unknown login never matches, whatever the password.
        assert!(!verify_password(&h, "\0no login\0".into(), None).await.unwrap());
    }

    #[tokio::test]
    async fn a_password_waiting_too_long_for_its_turn_is_refused_with_503_and_retry_after() {
        let h = std::sync::Arc::new(PasswordHashes::new(1, Duration::from_millis(50)));
        // The one permit is held by a hash that takes longer than the wait.
        let busy = h.clone();
        let slow =
            tokio::spawn(async move { busy.run("slow", || std::thread::sleep(Duration::from_millis(500))).await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        let e = hash_password(&h, "correct horse".into()).await.unwrap_err();
        assert_eq!((e.status(), e.code()), (503, "unavailable"));
        let r = HttpError(e).into_response();
        assert_eq!(r.headers()[header::RETRY_AFTER], "1");
        slow.await.unwrap().unwrap();
        // Once it is free, the next hash passes.
        assert!(hash_password(&h, "correct horse".into()).await.is_ok());
    }
}
