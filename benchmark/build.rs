// `include_dir!` embeds the files under `tasks/` as byte strings, which cargo does not
// track: without this a changed or added task file would leave the binaries stale.
fn main() {
    println!("cargo::rerun-if-changed=../tasks");
}
