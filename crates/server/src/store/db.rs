//! [`Db`]: a pool of either backend, and the macros that write code once
//! for both: [`on_db!`] (a body compiled for each pool) and
//! [`bind_values!`] (a plan's values bound to a query).

/// A pool of either backend. Code written once for both is expanded for
/// each with [`on_db!`].
#[derive(Clone, Debug)]
pub(crate) enum Db {
    Sqlite(sqlx::SqlitePool),
    Postgres(sqlx::PgPool),
}

/// Runs `$body` with `$pool` bound to the pool of whichever backend `$db`
/// is: the body is compiled once per backend, written once.
macro_rules! on_db {
    ($db:expr, $pool:ident => $body:expr) => {
        match $db {
            $crate::store::db::Db::Sqlite($pool) => $body,
            $crate::store::db::Db::Postgres($pool) => $body,
        }
    };
}
pub(crate) use on_db;

/// Binds a plan's values to a query, for either backend.
macro_rules! bind_values {
    ($query:expr, $values:expr) => {{
        let mut q = $query;
        for v in $values {
            q = match v {
                $crate::store::plan::Val::Int(i) => q.bind(*i),
                $crate::store::plan::Val::Text(t) => q.bind(t.as_deref()),
            };
        }
        q
    }};
}
pub(crate) use bind_values;
