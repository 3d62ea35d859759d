//! Reading a folder that someone else filled: an agent's outputs, a Harbor job, a
//! results directory, a run's working copy after its experiment. Whoever wrote it may
//! have left a symbolic link to a host file (an SSH key, `/dev/zero`), a FIFO that
//! blocks every reader, a device, or a file of a hundred gigabytes. Every file the
//! runner, the importer and `pack` read from such a folder is read here, through a
//! [`Folder`]:
//!
//! - every path is resolved beneath the folder's directory handle (`cap-std`, which
//!   uses `openat2` with `RESOLVE_BENEATH` on Linux), so no `..`, no absolute path and
//!   no symbolic link reaches outside it, whatever is swapped in while we read; a
//!   relative link that stays inside is followed;
//! - only regular files are read: a FIFO, a socket or a device is refused by its type
//!   before it is opened, and the open itself never waits (`O_NONBLOCK`) nor takes a
//!   terminal (`O_NOCTTY`), in case one is swapped in after the check;
//! - every read is bounded (the bundle's limit for one artifact, unless said otherwise),
//!   checked against the file's size before reading and enforced while reading, since
//!   a file may grow.
//!
//! What is refused is named: the file as the user knows it (the folder's path joined
//! with the file's) and why, in one sentence ([`Refused`]).
//!
//! A command told to stop (Ctrl-C, SIGTERM) calls [`stop_reading`]: every read under
//! way or to come then fails at once ([`Why::Stopped`]), so the command unwinds through
//! its own clean-up (staging folders, temporary files) instead of finishing its work.

use std::ffi::OsString;
use std::fmt;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use cap_std::fs::{Dir, FileTypeExt as _, OpenOptions, OpenOptionsExt as _};

static STOP: AtomicBool = AtomicBool::new(false);

/// Makes every read through this module fail from now on, in every thread.
pub fn stop_reading() {
    STOP.store(true, Ordering::Relaxed);
}

/// Whether [`stop_reading`] was called.
pub fn stopped() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// A reader that fails once reading is stopped, between any two reads.
struct Stoppable<R>(R);

impl<R: Read> Read for Stoppable<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if stopped() {
            return Err(io::Error::other("stopped"));
        }
        self.0.read(buf)
    }
}

/// The most one file may hold: a bundle's limit for one artifact.
pub fn file_limit() -> u64 {
    bundle::Limits::default().artifact
}

/// Why a file was not read.
#[derive(Debug)]
pub enum Why {
    /// A symbolic link (the file itself or a folder on its way) whose target is
    /// outside the folder, or absolute.
    LinkOutside {
        link: PathBuf,
        target: PathBuf,
    },
    /// Not a regular file: what it is instead ("a FIFO", "a folder", …).
    NotRegular(&'static str),
    TooLarge {
        size: u64,
        limit: u64,
    },
    Missing,
    /// The command was told to stop.
    Stopped,
    Io(io::Error),
}

/// A file that was not read, and why.
#[derive(Debug)]
pub struct Refused {
    /// The file as the user knows it: the folder's path joined with the file's.
    pub path: PathBuf,
    /// What the folder is, for the sentence: "outputs folder", "Harbor job folder".
    pub folder: &'static str,
    pub why: Why,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path.display();
        match &self.why {
            Why::LinkOutside { link, target } => {
                // The file is the link, or lies behind a folder that is.
                let subject = if link == &self.path {
                    format!("`{path}` is a symbolic link")
                } else {
                    format!("`{path}` lies behind `{}`, a symbolic link", link.display())
                };
                if target.is_absolute() {
                    write!(
                        f,
                        "{subject} to the absolute path `{}`, outside the {}: only relative links that stay \
                         inside it are followed",
                        target.display(),
                        self.folder
                    )
                } else {
                    write!(f, "{subject} to `{}`, a path outside the {}", target.display(), self.folder)
                }
            }
            Why::NotRegular(what) => write!(f, "`{path}` is {what}, not a regular file"),
            Why::TooLarge { size, limit } if *limit == file_limit() => write!(
                f,
                "`{path}` holds {} bytes, more than the {} MiB a bundle artifact may hold",
                size,
                limit / (1024 * 1024)
            ),
            Why::TooLarge { size, limit } => {
                write!(f, "`{path}` holds {size} bytes, more than the {limit} it may hold")
            }
            Why::Missing => write!(f, "`{path}` does not exist"),
            Why::Stopped => write!(f, "`{path}` was not read: interrupted"),
            Why::Io(e) => write!(f, "`{path}`: {e}"),
        }
    }
}

impl std::error::Error for Refused {}

/// What an entry of a folder is, symbolic links inside the folder followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File {
        size: u64,
    },
    Folder,
    /// Anything else, named: "a FIFO", "a socket", "a character device", …
    Other(&'static str),
    /// A symbolic link that cannot be followed inside the folder; [`Entry::check`]
    /// says why.
    LinkOutside,
}

/// One entry of a listed folder.
#[derive(Debug, Clone)]
pub struct Entry {
    pub name: OsString,
    /// Its path relative to the folder.
    pub rel: PathBuf,
    pub kind: Kind,
    /// Whether the entry itself is a symbolic link (its kind is its target's), for a
    /// reader that refuses links even inside the folder.
    pub link: bool,
}

impl Entry {
    pub fn name_lossy(&self) -> String {
        self.name.to_string_lossy().into_owned()
    }

    /// The refusal of an entry that is a link out of `folder`, by name.
    pub fn check(&self, folder: &Folder) -> Result<(), Refused> {
        match self.kind {
            Kind::LinkOutside => folder.kind(&self.rel).map(drop),
            _ => Ok(()),
        }
    }
}

/// A folder handed to us, read only beneath its handle.
#[derive(Debug)]
pub struct Folder {
    dir: Dir,
    /// The folder's path, where a link's text is read for a message.
    path: PathBuf,
    /// The folder as messages show it.
    shown: PathBuf,
    what: &'static str,
}

impl Folder {
    /// Opens `path` (which the user named, so it may itself be a link) as the folder
    /// every later path is read beneath; `what` names it in messages.
    pub fn open(path: &Path, what: &'static str) -> Result<Folder, Refused> {
        let dir = Dir::open_ambient_dir(path, cap_std::ambient_authority()).map_err(|e| Refused {
            path: path.to_owned(),
            folder: what,
            why: if e.kind() == io::ErrorKind::NotFound { Why::Missing } else { Why::Io(e) },
        })?;
        Ok(Folder { dir, path: path.to_owned(), shown: path.to_owned(), what })
    }

    /// As [`Folder::open`], with paths shown relative to the folder (for a check's log,
    /// which is published: the runner's own paths do not belong in it).
    pub fn open_relative(path: &Path, what: &'static str) -> Result<Folder, Refused> {
        Ok(Folder { shown: PathBuf::new(), ..Folder::open(path, what)? })
    }

    /// The folder as the user named it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `rel` as the user knows it.
    pub fn shown(&self, rel: &Path) -> PathBuf {
        match (self.shown.as_os_str().is_empty(), rel.as_os_str().is_empty()) {
            (true, true) => PathBuf::from("."),
            (_, true) => self.shown.clone(),
            _ => self.shown.join(rel),
        }
    }

    fn refused(&self, rel: &Path, why: Why) -> Refused {
        let why = if stopped() { Why::Stopped } else { why };
        Refused { path: self.shown(rel), folder: self.what, why }
    }

    fn check_stop(&self, rel: &Path) -> Result<(), Refused> {
        if stopped() { Err(self.refused(rel, Why::Stopped)) } else { Ok(()) }
    }

    /// Turns an error of a resolution beneath the folder into its sentence: an escape
    /// is explained by the link that caused it.
    fn explain(&self, rel: &Path, e: io::Error) -> Refused {
        if e.kind() == io::ErrorKind::NotFound {
            return self.refused(rel, Why::Missing);
        }
        if let Some((link, target)) = self.link_outside(rel) {
            return self.refused(rel, Why::LinkOutside { link: self.shown(&link), target });
        }
        self.refused(rel, Why::Io(e))
    }

    /// The first symbolic link on `rel`'s way that cannot be followed inside the folder:
    /// one whose text is absolute or climbs above the folder (whether or not its target
    /// exists), or one the resolution beneath the folder refuses.
    fn link_outside(&self, rel: &Path) -> Option<(PathBuf, PathBuf)> {
        let mut at = PathBuf::new();
        for part in rel.components() {
            at.push(part);
            let meta = self.dir.symlink_metadata(&at).ok()?;
            if !meta.file_type().is_symlink() {
                continue;
            }
            // Only the link's text is read here, never its target.
            let target = std::fs::read_link(self.path.join(&at)).unwrap_or_default();
            let refused = matches!(self.dir.metadata(&at), Err(e) if e.kind() != io::ErrorKind::NotFound);
            if target.is_absolute() || climbs_out(at.parent().unwrap_or(Path::new("")), &target) || refused {
                return Some((at, target));
            }
        }
        None
    }

    /// What `rel` is, links inside the folder followed; `None` if nothing is there
    /// (a dangling link inside the folder counts as nothing).
    pub fn kind(&self, rel: &Path) -> Result<Option<Kind>, Refused> {
        self.check_stop(rel)?;
        check_relative(rel).map_err(|why| self.refused(rel, why))?;
        match self.dir.metadata(rel) {
            Ok(meta) => Ok(Some(kind_of(&meta))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => match self.link_outside(rel) {
                Some((link, target)) => {
                    Err(self.refused(rel, Why::LinkOutside { link: self.shown(&link), target }))
                }
                None => Ok(None),
            },
            Err(e) => Err(self.explain(rel, e)),
        }
    }

    /// The entries of the folder `rel` ("" for the folder itself), in the order the
    /// filesystem gives them. An entry that is a link leaving the folder is listed as
    /// [`Kind::LinkOutside`] (reading it is refused), so that the caller can name the
    /// run it belongs to.
    pub fn entries(&self, rel: &Path) -> Result<Vec<Entry>, Refused> {
        self.check_stop(rel)?;
        check_relative(rel).map_err(|why| self.refused(rel, why))?;
        let read = if rel.as_os_str().is_empty() { self.dir.entries() } else { self.dir.read_dir(rel) };
        let mut out = Vec::new();
        for entry in read.map_err(|e| self.explain(rel, e))? {
            let entry = entry.map_err(|e| self.refused(rel, Why::Io(e)))?;
            let name = entry.file_name();
            let child = rel.join(&name);
            let file_type = entry.file_type().map_err(|e| self.refused(&child, Why::Io(e)))?;
            let kind = match file_type {
                t if t.is_symlink() => match self.kind(&child) {
                    Ok(Some(kind)) => kind,
                    Ok(None) => Kind::Other("a symbolic link to nothing"),
                    Err(Refused { why: Why::LinkOutside { .. }, .. }) => Kind::LinkOutside,
                    Err(e) => return Err(e),
                },
                t if t.is_dir() => Kind::Folder,
                _ => kind_of(&entry.metadata().map_err(|e| self.refused(&child, Why::Io(e)))?),
            };
            out.push(Entry { name, rel: child, kind, link: file_type.is_symlink() });
        }
        Ok(out)
    }

    /// Opens the regular file `rel` for reading, if it holds at most `limit` bytes.
    /// Returns the file and its size. Reads of it fail once reading is stopped.
    pub fn open_file(&self, rel: &Path, limit: u64) -> Result<(impl Read + use<>, u64), Refused> {
        let (file, size) = self.open_std(rel, limit)?;
        Ok((Stoppable(file), size))
    }

    fn open_std(&self, rel: &Path, limit: u64) -> Result<(File, u64), Refused> {
        match self.kind(rel)? {
            None => return Err(self.refused(rel, Why::Missing)),
            Some(Kind::File { size }) if size > limit => {
                return Err(self.refused(rel, Why::TooLarge { size, limit }));
            }
            Some(Kind::File { .. }) => {}
            Some(Kind::Folder) => return Err(self.refused(rel, Why::NotRegular("a folder"))),
            Some(Kind::Other(what)) => return Err(self.refused(rel, Why::NotRegular(what))),
            Some(Kind::LinkOutside) => unreachable!("kind() refuses a link out"),
        }
        let mut options = OpenOptions::new();
        options.read(true).custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY);
        let file = self.dir.open_with(rel, &options).map_err(|e| self.explain(rel, e))?.into_std();
        // What was opened is what was checked, even if the entry was swapped meanwhile.
        let meta = file.metadata().map_err(|e| self.refused(rel, Why::Io(e)))?;
        if !meta.is_file() {
            return Err(self.refused(rel, Why::NotRegular(std_kind(&meta.file_type()))));
        }
        if meta.len() > limit {
            return Err(self.refused(rel, Why::TooLarge { size: meta.len(), limit }));
        }
        Ok((file, meta.len()))
    }

    /// The bytes of the regular file `rel`, at most `limit` of them.
    pub fn read_limited(&self, rel: &Path, limit: u64) -> Result<Vec<u8>, Refused> {
        let (file, size) = self.open_file(rel, limit)?;
        let mut bytes = Vec::with_capacity(size as usize);
        file.take(limit + 1).read_to_end(&mut bytes).map_err(|e| self.refused(rel, Why::Io(e)))?;
        if bytes.len() as u64 > limit {
            return Err(self.refused(rel, Why::TooLarge { size: bytes.len() as u64, limit }));
        }
        Ok(bytes)
    }

    /// The bytes of the regular file `rel`, at most a bundle artifact's worth.
    pub fn read(&self, rel: &Path) -> Result<Vec<u8>, Refused> {
        self.read_limited(rel, file_limit())
    }

    /// As [`Folder::read`], or `None` where nothing is at `rel`.
    pub fn read_if_present(&self, rel: &Path) -> Result<Option<Vec<u8>>, Refused> {
        match self.kind(rel)? {
            None => Ok(None),
            Some(_) => self.read(rel).map(Some),
        }
    }

    /// The last `max` bytes of the regular file `rel`, however large it is.
    pub fn read_tail(&self, rel: &Path, max: u64) -> Result<Vec<u8>, Refused> {
        let (mut file, size) = self.open_std(rel, u64::MAX)?;
        let io = |e| self.refused(rel, Why::Io(e));
        file.seek(SeekFrom::Start(size.saturating_sub(max))).map_err(io)?;
        let mut bytes = Vec::new();
        Stoppable(file).take(max).read_to_end(&mut bytes).map_err(io)?;
        Ok(bytes)
    }

    /// Copies the regular file `rel` to `to` (created or truncated), at most a bundle
    /// artifact's worth, without holding it whole.
    pub fn copy_to(&self, rel: &Path, to: &Path) -> Result<u64, Refused> {
        let limit = file_limit();
        let (file, _) = self.open_file(rel, limit)?;
        let mut out = File::create(to).map_err(|e| Refused {
            path: to.to_owned(),
            folder: self.what,
            why: Why::Io(e),
        })?;
        let copied =
            io::copy(&mut file.take(limit + 1), &mut out).map_err(|e| self.refused(rel, Why::Io(e)))?;
        if copied > limit {
            drop(out);
            let _ = std::fs::remove_file(to);
            return Err(self.refused(rel, Why::TooLarge { size: copied, limit }));
        }
        Ok(copied)
    }
}

/// A single file, read by the same rules with its own folder as the folder: a log
/// the runner wrote, or a file named on the command line. Messages name it by its
/// file name alone.
pub fn read_file(path: &Path, what: &'static str) -> Result<Vec<u8>, Refused> {
    let (folder, name) = parent_of(path, what)?;
    folder.read(name)
}

/// The last `max` bytes of a single file, read by the same rules.
pub fn read_file_tail(path: &Path, max: u64, what: &'static str) -> Result<Vec<u8>, Refused> {
    let (folder, name) = parent_of(path, what)?;
    folder.read_tail(name, max)
}

fn parent_of<'a>(path: &'a Path, what: &'static str) -> Result<(Folder, &'a Path), Refused> {
    let name = path.file_name().map(Path::new).ok_or_else(|| Refused {
        path: path.to_owned(),
        folder: what,
        why: Why::NotRegular("not a file's path"),
    })?;
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    Ok((Folder::open_relative(parent, what)?, name))
}

/// Whether `target`, read from the folder `from` (relative to the root), climbs above
/// the root.
fn climbs_out(from: &Path, target: &Path) -> bool {
    let mut depth = from.components().count();
    for part in target.components() {
        match part {
            Component::ParentDir if depth == 0 => return true,
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            _ => {}
        }
    }
    false
}

/// Paths handed to a folder are relative and never climb.
fn check_relative(rel: &Path) -> Result<(), Why> {
    if rel.components().all(|c| matches!(c, Component::Normal(_))) {
        Ok(())
    } else {
        Err(Why::Io(io::Error::new(io::ErrorKind::InvalidInput, "not a plain relative path")))
    }
}

fn kind_of(meta: &cap_std::fs::Metadata) -> Kind {
    let t = meta.file_type();
    if t.is_file() {
        Kind::File { size: meta.len() }
    } else if t.is_dir() {
        Kind::Folder
    } else if t.is_fifo() {
        Kind::Other("a FIFO (named pipe)")
    } else if t.is_socket() {
        Kind::Other("a socket")
    } else if t.is_char_device() {
        Kind::Other("a character device")
    } else if t.is_block_device() {
        Kind::Other("a block device")
    } else {
        Kind::Other("not a file")
    }
}

fn std_kind(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a folder"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else {
        "not a file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    fn folder() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("outputs");
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::write(root.join("a/b/file.txt"), "inside").unwrap();
        fs::write(tmp.path().join("secret"), "SECRET").unwrap();
        (tmp, root)
    }

    #[test]
    fn links_inside_are_followed_and_links_outside_are_refused_by_name() {
        let (tmp, root) = folder();
        symlink("b/file.txt", root.join("a/inside")).unwrap();
        symlink("../../secret", root.join("a/up")).unwrap();
        symlink(tmp.path().join("secret"), root.join("a/abs")).unwrap();
        symlink("..", root.join("a/b/parent")).unwrap();
        symlink("../..", root.join("a/escape-dir")).unwrap();
        let f = Folder::open(&root, "outputs folder").unwrap();
        assert_eq!(f.read(Path::new("a/inside")).unwrap(), b"inside");
        assert_eq!(f.read(Path::new("a/b/parent/b/file.txt")).unwrap(), b"inside");

        let e = f.read(Path::new("a/up")).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "`{}` is a symbolic link to `../../secret`, a path outside the outputs folder",
                root.join("a/up").display()
            )
        );
        let e = f.read(Path::new("a/abs")).unwrap_err().to_string();
        assert!(e.contains("is a symbolic link to the absolute path"), "{e}");
        let e = f.read(Path::new("a/escape-dir/secret")).unwrap_err().to_string();
        let behind = format!(
            "secret` lies behind `{}`, a symbolic link to `../..`",
            root.join("a/escape-dir").display()
        );
        assert!(e.contains(&behind), "{e}");
        let up = f.entries(Path::new("a")).unwrap().into_iter().find(|e| e.name == "up").unwrap();
        assert_eq!(up.kind, Kind::LinkOutside);
        assert!(up.check(&f).unwrap_err().to_string().contains("symbolic link to `../../secret`"));
        for bad in ["../secret", "/etc/passwd", "a/../../secret"] {
            assert!(f.read(Path::new(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_regular_files_within_the_limit_are_read_and_nothing_blocks() {
        let (_tmp, root) = folder();
        nix::unistd::mkfifo(&root.join("fifo"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let f = Folder::open(&root, "outputs folder").unwrap();
        let e = f.read(Path::new("fifo")).unwrap_err().to_string();
        assert!(e.ends_with("fifo` is a FIFO (named pipe), not a regular file"), "{e}");
        let e = f.read(Path::new("a")).unwrap_err().to_string();
        assert!(e.ends_with("a` is a folder, not a regular file"), "{e}");
        assert!(f.read(Path::new("nothing")).unwrap_err().to_string().ends_with("does not exist"));

        let big = fs::File::create(root.join("big")).unwrap();
        big.set_len(file_limit() + 1).unwrap();
        let e = f.read(Path::new("big")).unwrap_err().to_string();
        assert!(e.contains("more than the 64 MiB a bundle artifact may hold"), "{e}");
        assert!(f.read_limited(Path::new("a/b/file.txt"), 3).unwrap_err().to_string().contains("6 bytes"));
        assert_eq!(f.read_tail(Path::new("a/b/file.txt"), 4).unwrap(), b"side");
        assert_eq!(f.read_if_present(Path::new("none")).unwrap(), None);

        let kinds: Vec<(String, Kind)> = {
            let mut v: Vec<_> =
                f.entries(Path::new("")).unwrap().into_iter().map(|e| (e.name_lossy(), e.kind)).collect();
            v.sort_by(|a, b| a.0.cmp(&b.0));
            v
        };
        assert_eq!(
            kinds,
            [
                ("a".to_owned(), Kind::Folder),
                ("big".to_owned(), Kind::File { size: file_limit() + 1 }),
                ("fifo".to_owned(), Kind::Other("a FIFO (named pipe)")),
            ]
        );
    }
}
