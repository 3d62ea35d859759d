//! Key files on disk: `NAME.pem` (secret, PKCS#8, owner-only) and `NAME.pub.pem`.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use bundle::{PublicKey, SecretKey};

#[derive(Debug, thiserror::Error)]
pub enum KeyFileError {
    #[error("cannot read key file {}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}", path.display())]
    Parse { path: PathBuf, source: bundle::KeyError },
    #[error("{} already exists; pass --force to replace it", .0.display())]
    Exists(PathBuf),
    #[error("cannot write {}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
}

pub fn read_secret(path: &Path) -> Result<SecretKey, KeyFileError> {
    let text = read(path)?;
    SecretKey::from_pem(&text).map_err(|source| KeyFileError::Parse { path: path.to_owned(), source })
}

pub fn read_public(path: &Path) -> Result<PublicKey, KeyFileError> {
    let text = read(path)?;
    PublicKey::from_pem(&text).map_err(|source| KeyFileError::Parse { path: path.to_owned(), source })
}

fn read(path: &Path) -> Result<String, KeyFileError> {
    fs::read_to_string(path).map_err(|source| KeyFileError::Read { path: path.to_owned(), source })
}

/// Writes a new key pair as `PREFIX.pem` and `PREFIX.pub.pem`; returns both paths.
pub fn write_pair(key: &SecretKey, prefix: &Path, force: bool) -> Result<(PathBuf, PathBuf), KeyFileError> {
    let secret = with_suffix(prefix, ".pem");
    let public = with_suffix(prefix, ".pub.pem");
    if !force {
        for p in [&secret, &public] {
            if p.exists() {
                return Err(KeyFileError::Exists(p.clone()));
            }
        }
    }
    write(&secret, key.to_pem().as_bytes(), 0o600)?;
    write(&public, key.public_key().to_pem().as_bytes(), 0o644)?;
    Ok((secret, public))
}

fn with_suffix(prefix: &Path, suffix: &str) -> PathBuf {
    let mut s = prefix.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

fn write(path: &Path, bytes: &[u8], mode: u32) -> Result<(), KeyFileError> {
    let wrap = |source| KeyFileError::Write { path: path.to_owned(), source };
    let mut opts = OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, mode);
    #[cfg(not(unix))]
    let _ = mode;
    let mut f = opts.open(path).map_err(wrap)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(fs::Permissions::from_mode(mode)).map_err(wrap)?;
    }
    f.write_all(bytes).map_err(wrap)
}
