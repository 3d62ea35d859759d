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

/// The admin token `reproduce` uses: the first line of `file`, or what is typed at the
/// terminal (not echoed) where no file is named. Never from the environment: a token
/// there is refused, so that no process `reproduce` starts could be handed it.
pub fn admin_token(file: Option<&Path>, server: &str) -> Result<String, Error> {
    if std::env::var_os("REXBENCH_ADMIN_TOKEN").is_some() {
        return Err(Error::Setup(
            "REXBENCH_ADMIN_TOKEN is set in reproduce's environment: give the token with --token-file FILE or \
             at the prompt, and unset the variable (every process a re-run starts would be started from it)"
                .into(),
        ));
    }
    let token = match file {
        Some(path) => {
            let mut text = String::new();
            std::io::Read::read_to_string(
                &mut std::io::Read::take(
                    fs::File::open(path)
                        .map_err(|source| Error::KeyRead { path: path.to_owned(), source })?,
                    4096,
                ),
                &mut text,
            )
            .map_err(|source| Error::KeyRead { path: path.to_owned(), source })?;
            text.lines().next().unwrap_or("").trim().to_owned()
        }
        None => prompt(&format!("The admin token of {server}: "))?,
    };
    if token.is_empty() {
        let from = file.map_or("the prompt".to_owned(), |p| p.display().to_string());
        return Err(Error::Setup(format!("no admin token in {from}: its first line is the token")));
    }
    Ok(token)
}

/// A line typed at the terminal, its echo off while it is typed.
fn prompt(question: &str) -> Result<String, Error> {
    use nix::sys::termios::{LocalFlags, SetArg, tcgetattr, tcsetattr};
    let tty = OpenOptions::new().read(true).write(true).open("/dev/tty").map_err(|_| {
        Error::Setup("no terminal to ask for the admin token: give it with --token-file FILE".into())
    })?;
    let was = tcgetattr(&tty).map_err(|e| Error::Setup(format!("the terminal: {e}")))?;
    let mut quiet = was.clone();
    quiet.local_flags.remove(LocalFlags::ECHO);
    let _ = tcsetattr(&tty, SetArg::TCSANOW, &quiet);
    let mut line = String::new();
    let read = (|| -> std::io::Result<()> {
        (&tty).write_all(question.as_bytes())?;
        std::io::BufRead::read_line(&mut std::io::BufReader::new(&tty), &mut line)?;
        (&tty).write_all(b"\n")
    })();
    let _ = tcsetattr(&tty, SetArg::TCSANOW, &was);
    read.map_err(|e| Error::Setup(format!("reading the admin token at the terminal: {e}")))?;
    Ok(line.trim().to_owned())
}
