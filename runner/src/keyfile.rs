//! Key files on disk: `NAME.pem` (secret, PKCS#8, owner-only) and `NAME.pub.pem`.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::Error;
use bundle::{PublicKey, SecretKey};

pub fn read_secret(path: &Path) -> Result<SecretKey, Error> {
    let text = read(path)?;
    SecretKey::from_pem(&text).map_err(|source| Error::KeyParse { path: path.to_owned(), source })
}

pub fn read_public(path: &Path) -> Result<PublicKey, Error> {
    let text = read(path)?;
    PublicKey::from_pem(&text).map_err(|source| Error::KeyParse { path: path.to_owned(), source })
}

fn read(path: &Path) -> Result<String, Error> {
    fs::read_to_string(path).map_err(|source| Error::KeyRead { path: path.to_owned(), source })
}

/// Writes a new key pair as `PREFIX.pem` and `PREFIX.pub.pem`; returns both paths.
pub fn write_pair(key: &SecretKey, prefix: &Path, force: bool) -> Result<(PathBuf, PathBuf), Error> {
    let secret = with_suffix(prefix, ".pem");
    let public = with_suffix(prefix, ".pub.pem");
    if !force {
        for p in [&secret, &public] {
            if p.exists() {
                return Err(Error::Exists(p.clone()));
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

fn write(path: &Path, bytes: &[u8], mode: u32) -> Result<(), Error> {
    let wrap = |source| Error::Write { path: path.to_owned(), source };
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
