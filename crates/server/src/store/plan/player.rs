//! The parts of a [`WritePlan`] for a player's account: limits, login,
//! sessions, recovery code, closure.

use super::write::{Val, WritePlan};
use domain::{LimitsRow, PlayerId, PlayerWrite};

impl WritePlan {
    /// A player's limits (one row per player, replaced), login, or session.
    pub(super) fn player(&mut self, w: &PlayerWrite) {
        match w {
            PlayerWrite::Limits { player, row, updated_ms } => self.limits(*player, row, *updated_ms),
            PlayerWrite::Credentials {
                player,
                login,
                password_hash,
                was,
                keep_session,
                revoke_own_token,
                recovery_hash,
            } => {
                let login = self.placeholder(login.as_str().into());
                let hash = self.placeholder(password_hash.as_str().into());
                let recovery = match recovery_hash {
                    Some(r) => format!(", recovery_hash = {}", self.placeholder(r.as_str().into())),
                    None => String::new(),
                };
                let own = if *revoke_own_token {
                    let revoked = self.placeholder(domain::account::revoked_token_hash(*player).as_str().into());
                    format!(", token_hash = {revoked}")
                } else {
                    String::new()
                };
                let id = self.placeholder((*player).into());
                let was = self.placeholder(was.as_deref().into());
                let sql = format!(
                    "UPDATE players SET login = {login}, password_hash = {hash}{recovery}{own} \
                     WHERE id = {id} AND password_hash IS NOT DISTINCT FROM {was}"
                );
                self.push_part("credentials", sql, true);
                // Every other session ends with the old password.
                let p = self.placeholder((*player).into());
                let sql = match keep_session {
                    Some(keep) => {
                        let keep = self.placeholder(keep.as_str().into());
                        format!("DELETE FROM sessions WHERE player_id = {p} AND token_hash <> {keep}")
                    }
                    None => format!("DELETE FROM sessions WHERE player_id = {p}"),
                };
                self.push_part("other_sessions", sql, false);
            }
            PlayerWrite::OpenSession { token_hash, player, created_ms, expires_ms } => {
                // The player's expired sessions go as a new one comes: the
                // table holds at most the sessions still alive, and one.
                let p = self.placeholder((*player).into());
                let now = self.placeholder((*created_ms).into());
                let sql = format!("DELETE FROM sessions WHERE player_id = {p} AND expires_ms <= {now}");
                self.push_part("expired_sessions", sql, false);
                self.insert_row(
                    "session",
                    "sessions",
                    vec![
                        ("token_hash", token_hash.as_str().into()),
                        ("player_id", (*player).into()),
                        ("created_ms", (*created_ms).into()),
                        ("expires_ms", (*expires_ms).into()),
                    ],
                )
            }
            PlayerWrite::CloseSession { token_hash } => {
                let th = self.placeholder(token_hash.as_str().into());
                let sql = format!("DELETE FROM sessions WHERE token_hash = {th}");
                self.push_part("logout", sql, false);
            }
            PlayerWrite::RevokeOwnToken { player } => {
                let revoked = self.placeholder(domain::account::revoked_token_hash(*player).as_str().into());
                let id = self.placeholder((*player).into());
                let sql = format!("UPDATE players SET token_hash = {revoked} WHERE id = {id}");
                self.push_part("revoke_own_token", sql, true);
            }
            PlayerWrite::Recover {
                player,
                password_hash,
                recovery_hash,
                was_recovery,
                session_token_hash,
                created_ms,
                expires_ms,
            } => {
                // The code works once: the row changes only if its hash is still the one checked.
                let hash = self.placeholder(password_hash.as_str().into());
                let recovery = self.placeholder(recovery_hash.as_str().into());
                let revoked = self.placeholder(domain::account::revoked_token_hash(*player).as_str().into());
                let id = self.placeholder((*player).into());
                let was = self.placeholder(was_recovery.as_str().into());
                let sql = format!(
                    "UPDATE players SET password_hash = {hash}, recovery_hash = {recovery}, token_hash = {revoked} \
                     WHERE id = {id} AND recovery_hash = {was} AND closed_ms IS NULL"
                );
                self.push_part("recover", sql, true);
                let p = self.placeholder((*player).into());
                self.push_part("recover_sessions", format!("DELETE FROM sessions WHERE player_id = {p}"), false);
                self.insert_row(
                    "recover_session",
                    "sessions",
                    vec![
                        ("token_hash", session_token_hash.as_str().into()),
                        ("player_id", (*player).into()),
                        ("created_ms", (*created_ms).into()),
                        ("expires_ms", (*expires_ms).into()),
                    ],
                )
            }
            PlayerWrite::SetRecovery { player, recovery_hash, password_was } => {
                let recovery = self.placeholder(recovery_hash.as_str().into());
                let id = self.placeholder((*player).into());
                let was = self.placeholder(password_was.as_str().into());
                let sql = format!(
                    "UPDATE players SET recovery_hash = {recovery} \
                     WHERE id = {id} AND password_hash = {was} AND closed_ms IS NULL"
                );
                self.push_part("recovery_code", sql, true);
            }
            PlayerWrite::Close { player, closed_ms, password_was } => {
                let revoked = self.placeholder(domain::account::revoked_token_hash(*player).as_str().into());
                let at = self.placeholder((*closed_ms).into());
                let id = self.placeholder((*player).into());
                let was = self.placeholder(password_was.as_deref().into());
                let sql = format!(
                    "UPDATE players SET login = NULL, password_hash = NULL, recovery_hash = NULL, \
                     token_hash = {revoked}, closed_ms = {at} \
                     WHERE id = {id} AND closed_ms IS NULL AND password_hash IS NOT DISTINCT FROM {was}"
                );
                self.push_part("close", sql, true);
                let p = self.placeholder((*player).into());
                self.push_part("close_sessions", format!("DELETE FROM sessions WHERE player_id = {p}"), false);
            }
        }
    }

    /// A player's limits: their row, created or replaced.
    fn limits(&mut self, player: PlayerId, row: &LimitsRow, updated_ms: i64) {
        let pending = row.pending;
        let columns = [
            ("player_id", Val::from(player)),
            ("tickets_per_day", row.tickets_per_day.into()),
            ("spend_per_week_cents", row.spend_per_week_cents.into()),
            ("pending_tickets_per_day", pending.and_then(|p| p.tickets_per_day).into()),
            ("pending_spend_per_week_cents", pending.and_then(|p| p.spend_per_week_cents).into()),
            ("pending_from_ms", pending.map(|p| p.from_ms).into()),
            ("excluded_until_ms", row.excluded_until_ms.into()),
            ("updated_ms", updated_ms.into()),
        ];
        let names: Vec<&str> = columns.iter().map(|(c, _)| *c).collect();
        let marks: Vec<String> = columns.into_iter().map(|(_, v)| self.placeholder(v)).collect();
        let set: Vec<String> = names[1..].iter().map(|c| format!("{c} = excluded.{c}")).collect();
        let sql = format!(
            "INSERT INTO player_limits ({}) VALUES ({}) ON CONFLICT (player_id) DO UPDATE SET {}",
            names.join(", "),
            marks.join(", "),
            set.join(", ")
        );
        self.push_part("limits", sql, false);
    }
}
