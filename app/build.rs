//! Stops a build of the app with both `ssr` and `hydrate`.
//!
//! Both at once is what `cargo build --workspace` asks for (it builds the browser crates
//! beside the server, and features unify), and Leptos then builds a server whose every
//! page fails ("spawn_local called from outside of a task::LocalSet"). Never a binary.
//! A build script says so before any dependency is compiled, where a `compile_error!`
//! in the library would wait for all of them (minutes).

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let enabled = |feature: &str| std::env::var_os(format!("CARGO_FEATURE_{feature}")).is_some();
    if enabled("SSR") && enabled("HYDRATE") {
        eprintln!(
            "rexbench-app was built with both `ssr` (the server) and `hydrate` (the browser's islands), as \
             `cargo build --workspace` does: build the server with `cargo build` (the workspace's default \
             members) and the browser's WebAssembly with `bash scripts/wasm`"
        );
        std::process::exit(1);
    }
}
