//! Embeds the browser's WebAssembly (what `scripts/wasm` wrote to `target/site/pkg`)
//! into the server, so that an installed binary serves it from anywhere. Without it the
//! server is built with none and serves every page without islands.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let pkg = root.join("../target/site/pkg");
    // Watched even before it exists (so that the first `scripts/wasm` is noticed).
    std::fs::create_dir_all(&pkg).expect("creating target/site/pkg");
    println!("cargo:rerun-if-changed={}", pkg.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&pkg)
        .expect("reading target/site/pkg")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    let mut code = String::from("pub(crate) static FILES: &[(&str, &[u8])] = &[\n");
    for file in files {
        let name = file.file_name().and_then(|n| n.to_str()).expect("a file name in UTF-8");
        let path = file.canonicalize().expect("a readable file");
        writeln!(code, "    ({name:?}, include_bytes!({:?})),", path.display().to_string()).unwrap();
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it")).join("pkg.rs");
    std::fs::write(out, code).expect("writing pkg.rs");
}
