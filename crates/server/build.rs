// The migrations are embedded by `sqlx::migrate!` (store/schema.rs), which
// cargo does not know to watch: without this, a new or changed migration
// file is not in the next build.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
