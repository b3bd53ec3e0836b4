//! Links `quarry` at a fixed address (not position-independent) on Linux. A position-
//! independent executable is relocated at every start: its tables of pointers (clap's
//! commands, the tree-sitter grammars, sqlite) are written page by page before `main`. That
//! cost 0.5 ms of every run, a fifth of a short `quarry grep`, and agents run quarry once per
//! tool call. Shared libraries, heap and stack are still placed at random.
fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
