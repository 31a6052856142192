//! The end of an emission's sale with its closing notice, and the claims:
//! the paper prizes above a shop's payout ceiling, listed for the desk and
//! paid once by the operator's payment centre (`domain::claims`).

use super::clock::now_ms;
use super::db::on_db;
use super::shell::Store;
use crate::store::error::DbResult;
use domain::Close;
use domain::TicketStatus;
use domain::deadline::deadline_passed;
use domain::error::AppError;
use domain::retail::{Payer, PayoutCeilings, payer};
use domain::usecase;
use domain::{Changes, Effect, Op};
use serde::Serialize;

/// The most claims one answer lists (the newest first).
pub const CLAIMS_LISTED: i64 = 1000;

/// A won paper ticket whose prize is above the payout ceiling of the shop
/// that sold it: the operator's payment centre pays it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct Claim {
    pub serial: String,
    pub emission: u32,
    pub block: u32,
    pub prize_cents: i64,
    /// The shop that sold it, and its payout ceiling.
    pub sold_by: Option<String>,
    pub shop_ceiling_cents: i64,
    /// When its game finished (unix ms).
    pub won_ms: Option<i64>,
    /// `owed` (to pay), `paid` (by the payment centre, or by a shop whose
    /// own ceiling is higher where any shop pays any winner:
    /// `retail_pay_any_shop`) or `expired` (the claim deadline passed unpaid).
    #[schema(pattern = "^(owed|paid|expired)$")]
    pub status: String,
    /// The claim deadline (unix ms), once the emission's sale is closed.
    pub claim_until_ms: Option<i64>,
    pub paid_ms: Option<i64>,
    /// Who paid it, once paid: a shop's name, or `null` for the operator's
    /// payment centre (whose payment has its `reference`).
    pub paid_by: Option<String>,
    /// The payment's reference (cheque, transfer), once paid by the payment centre.
    pub reference: Option<String>,
}

/// `GET /api/admin/claims`.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct Claims {
    /// The payout ceiling of shops without their own (cents).
    pub default_ceiling_cents: i64,
    /// Owed claims' prizes, in cents (of those listed).
    pub owed_cents: i64,
    /// At most 1 000, the latest won first.
    pub claims: Vec<Claim>,
}

impl Store {
    /// Ends the sale of an emission now, with its closing notice (the
    /// deadline of its paper prizes follows from the notice's date).
    pub async fn close_emission(&self, close: Close) -> Result<(), AppError> {
        let emission = close.emission;
        let changes = Changes {
            audit: Some(domain::AuditRecord {
                created_ms: close.sale_end_ms,
                kind: "sale_ended",
                data_json: serde_json::json!({
                    "emission": emission,
                    "sale_end_ms": close.sale_end_ms,
                    "closing_notice_date": close.notice_date,
                    "closing_notice_ref": close.notice_ref,
                    "claim_end_ms": close.claim_end_ms,
                })
                .to_string(),
            }),
            close: Some(close),
            ..Changes::none(Effect::Emission)
        };
        match self.write(Op::Apply(Box::new(changes))).await {
            Err(AppError::Storage(domain::error::StoreError::Stale(_))) => {
                Err(AppError::Conflict(format!("emission {emission} is unknown or its sale already ended")))
            }
            other => other.map(|_| ()),
        }
    }

    /// A purchase's `sold_out` as the truth has it: while an online
    /// emission is on sale, its published blocks are sold (the operator can
    /// add blocks: `refusal` as it is); once every online emission's sale is
    /// closed, the closing is said (nothing is sold online until a new
    /// emission), or that there is no online emission at all.
    pub async fn why_sold_out(&self, refusal: AppError) -> AppError {
        match self.latest_online_emission().await {
            Ok(Some((emission, Some(ended), notice))) => AppError::SoldOut(format!(
                "no ticket is for sale: the sale of emission {emission} was closed on {}{}, and no online emission is \
                 on sale since; nothing is sold online until the operator opens a new emission",
                format::french_date(ended),
                notice.map(|d| format!(" (closing notice of {d})")).unwrap_or_default()
            )),
            Ok(None) => AppError::SoldOut("no ticket is for sale: no emission is sold online".into()),
            Ok(Some((_, None, _))) => refusal,
            Err(e) => {
                tracing::warn!(error = %e, "reading why nothing is for sale");
                refusal
            }
        }
    }

    /// The online emission on sale, else the one whose sale closed last:
    /// its number, the end of its sale and its closing notice's date.
    async fn latest_online_emission(&self) -> Result<Option<(i64, Option<i64>, Option<String>)>, AppError> {
        Ok(on_db!(&self.db, pool => sqlx::query_as(
            "SELECT id, sale_end_ms, closing_notice_date FROM emissions WHERE channel = 'online'
             ORDER BY sale_end_ms IS NULL DESC, sale_end_ms DESC, id DESC LIMIT 1",
        )
        .fetch_optional(pool)
        .await.db()?))
    }

    /// The operator's payment centre pays the claim of ticket `serial`,
    /// once; the answer, and whether it is the stored answer of the same
    /// payment (a retry with the same reference: nothing written).
    pub async fn pay_claim(
        &self,
        serial: &str,
        reference: String,
        ceilings: std::sync::Arc<PayoutCeilings>,
    ) -> Result<(String, bool), AppError> {
        let serial = domain::retail::parse_serial(serial)?;
        let centre: Option<i64> = on_db!(&self.db, pool => sqlx::query_scalar(
            "SELECT id FROM accounts WHERE name = 'house:payment_centre'"
        )
        .fetch_optional(pool)
        .await.db()?);
        let centre = centre.ok_or_else(|| AppError::internal("the account house:payment_centre is missing"))?;
        let done = self.write(Op::ClaimPay(usecase::ClaimPay { serial, reference, ceilings, centre })).await?;
        Ok((done.answer, done.effect.is_none()))
    }

    /// The claims: won paper tickets above their seller's payout ceiling,
    /// owed, paid (by the payment centre, or by another shop where any shop
    /// pays) or expired; read from the won games by prize (index
    /// `ticket_games_won`), never a scan of them all.
    pub async fn claims(&self, ceilings: &PayoutCeilings) -> Result<Claims, AppError> {
        type Row = (
            String,
            i64,
            i64,
            i64,
            Option<String>,
            String,
            Option<i64>,
            Option<i64>,
            Option<i64>,
            Option<String>,
            Option<String>,
        );
        // Paid by a shop or by the payment centre, a claim stays listed, with who paid it.
        let rows: Vec<Row> = on_db!(&self.db, pool => sqlx::query_as(
            "SELECT t.serial, e.id, b.number, g.prize_cents, t.shop, t.status, g.finished_ms, e.claim_end_ms, t.paid_ms,
                    t.paid_shop, cp.reference
             FROM ticket_games g JOIN tickets t ON t.id = g.ticket_id
             JOIN blocks b ON b.id = t.block_id JOIN emissions e ON e.id = b.emission_id
             LEFT JOIN claim_payments cp ON cp.ticket_id = t.id
             WHERE g.prize_cents > 0 AND g.prize_cents > $1 AND e.channel = 'paper'
               AND t.status IN ('sold', 'paid')
             ORDER BY g.finished_ms DESC, t.id DESC LIMIT $2",
        )
        .bind(ceilings.lowest())
        .bind(CLAIMS_LISTED)
        .fetch_all(pool)
        .await.db()?);
        let now = now_ms();
        let mut claims = Vec::new();
        for (serial, emission, block, prize_cents, sold_by, status, won_ms, until, paid_ms, paid_by, reference) in rows
        {
            // The query keeps the prizes above the lowest ceiling; a claim is one its seller may not pay.
            let shop_ceiling_cents = ceilings.of(sold_by.as_deref().unwrap_or(""));
            if payer(prize_cents, shop_ceiling_cents) == Payer::Shop {
                continue;
            }
            let status = match TicketStatus::parse(&status) {
                Some(TicketStatus::Paid) => "paid",
                _ if deadline_passed(until, now) => "expired",
                _ => "owed",
            };
            claims.push(Claim {
                serial,
                emission: u32::try_from(emission).map_err(|_| AppError::internal("an emission number"))?,
                block: u32::try_from(block).map_err(|_| AppError::internal("a block number"))?,
                prize_cents,
                sold_by,
                shop_ceiling_cents,
                won_ms,
                status: status.to_string(),
                claim_until_ms: until,
                paid_ms,
                paid_by,
                reference,
            });
        }
        let owed_cents = claims.iter().filter(|c| c.status == "owed").map(|c| c.prize_cents).sum();
        Ok(Claims { default_ceiling_cents: ceilings.default_cents, owed_cents, claims })
    }
}
