//! Writes the conformance vectors: `cargo run -p rexbench-bundle --features vectors
//! --example vectors -- DIR` (the repository's are in `vectors/`). The keys are read from
//! `DIR/test-key/` (`key.pem`, the key a verifier trusts, and `stranger.pem`), and made
//! there first if absent; the same keys always give the same vectors.

use std::path::PathBuf;

use bundle::SecretKey;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "vectors".into()));
    let keys = dir.join("test-key");
    std::fs::create_dir_all(&keys)?;
    let key = |name: &str| -> Result<SecretKey, Box<dyn std::error::Error>> {
        let path = keys.join(format!("{name}.pem"));
        if !path.exists() {
            let key = SecretKey::generate();
            std::fs::write(&path, key.to_pem())?;
            std::fs::write(keys.join(format!("{name}.pub.pem")), key.public_key().to_pem())?;
        }
        Ok(SecretKey::from_pem(&std::fs::read_to_string(&path)?)?)
    };
    let (trusted, stranger) = (key("key")?, key("stranger")?);
    bundle::vectors::write(&dir, &trusted, &stranger)?;
    println!("wrote the conformance vectors to {}", dir.display());
    Ok(())
}
