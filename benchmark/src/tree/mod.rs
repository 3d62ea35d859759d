//! Folder trees on disk, copied, walked and removed: a task's codebase copied into a
//! run's scratch folder, a working copy given to the sandbox's user, copied for a check
//! that runs a command, and removed once its run is over.
//!
//! An experiment decides what its working copy holds when it ends: a folder 20,000
//! deep, a folder or a file mode 000, a million entries, links anywhere. So everything
//! here is
//!
//! - **iterative**: an explicit stack, never recursion, and one open folder at a time
//!   whatever the depth (a folder is left through `..`, checked to be the one it was
//!   entered from), so neither the stack nor the descriptors run out;
//! - **beneath a handle**: each entry is reached by its name under its folder's
//!   descriptor, never by a path (a path 20,000 folders deep is longer than any system
//!   call takes), and opened with `O_NOFOLLOW`: a symbolic link is never followed (a copy
//!   makes it again as a link, or leaves it out; a walk gives the link itself);
//! - **restoring permissions first**: a folder its owner cannot read and enter is given
//!   `u+rwx` before it is read (or removed), a file its owner cannot read `u+r` before it
//!   is copied (the runner owns the scratch folders, or is root over them; elsewhere the
//!   change may be refused, and the read that follows says why);
//! - **bounded**: a copy or a walk stops at its [`Bounds`] (depth, entries, bytes of
//!   files) with a [`TreeError::Bound`] that names the bound and where it was hit.
//!   Removing is not bounded: [`remove`] deletes everything, however deep.

use std::ffi::CStr;
use std::fmt;
use std::fs;
use std::io::{self, Read as _};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::fcntl::{AtFlags, OFlag, openat, readlinkat};
use nix::sys::stat::{FileStat, Mode, SFlag, fchmod, fstat, mkdirat};
use nix::unistd::{Gid, Uid, UnlinkatFlags, fchownat, symlinkat, unlinkat};

use walker::{DIR_FLAGS, Id, Walker, climb, id, kind, moved, read_at, restore, write_at};

/// How many folders deep a tree may go (a codebase's deepest is a dozen or so).
pub const MAX_DEPTH: usize = 256;
/// How many entries (files, folders, links, anything) a tree may hold.
pub const MAX_ENTRIES: u64 = 1_000_000;
/// How many bytes of files a copy may write, where its caller gives no other bound
/// (a run's working copy is held to its card's disk limit while it runs).
pub const MAX_BYTES: u64 = 32 << 30;

/// What a copy or a walk goes through before it stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Folders beneath the root (a folder in the root is 1 deep).
    pub depth: usize,
    /// Entries seen, of every kind.
    pub entries: u64,
    /// Bytes of regular files copied.
    pub bytes: u64,
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds { depth: MAX_DEPTH, entries: MAX_ENTRIES, bytes: MAX_BYTES }
    }
}

/// One of [`Bounds`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    Depth,
    Entries,
    Bytes,
}

/// Why a copy, a walk or a removal stopped. Paths are relative to the tree's root (`.`
/// is the root itself).
#[derive(Debug)]
pub enum TreeError {
    /// The tree goes past a bound: `limit` (folders, entries or bytes) at `path`.
    Bound { bound: Bound, limit: u64, path: PathBuf },
    /// An entry of the tree cannot be read (opened, listed, entered).
    Read { path: PathBuf, source: io::Error },
    /// What the copy makes (or a walk changes) cannot be written.
    Write { path: PathBuf, source: io::Error },
}

impl TreeError {
    /// Whether the tree is the cause (a bound it goes past, an entry that cannot be
    /// read), not the machine the copy is written on.
    pub fn of_the_tree(&self) -> bool {
        !matches!(self, TreeError::Write { .. })
    }
}

impl fmt::Display for TreeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TreeError::Bound { bound, limit, path } => {
                let (what, limit) = match bound {
                    Bound::Depth => ("depth", format!("{limit} folders deep")),
                    Bound::Entries => ("entries", format!("{limit} entries")),
                    Bound::Bytes => ("bytes", format!("{} of files", size(*limit))),
                };
                write!(f, "past the tree's bound of {limit} ({what}) at `{}`", shown(path))
            }
            TreeError::Read { path, source } => write!(f, "cannot read `{}`: {source}", shown(path)),
            TreeError::Write { path, source } => write!(f, "cannot write `{}`: {source}", shown(path)),
        }
    }
}

impl std::error::Error for TreeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TreeError::Bound { .. } => None,
            TreeError::Read { source, .. } | TreeError::Write { source, .. } => Some(source),
        }
    }
}

impl From<TreeError> for io::Error {
    fn from(e: TreeError) -> io::Error {
        let kind = match &e {
            TreeError::Bound { .. } => io::ErrorKind::Other,
            TreeError::Read { source, .. } | TreeError::Write { source, .. } => source.kind(),
        };
        io::Error::new(kind, e.to_string())
    }
}

/// A path as an error shows it: a deep one by its first and last folders.
fn shown(path: &Path) -> String {
    let parts: Vec<_> = path.iter().map(|p| p.to_string_lossy()).collect();
    match parts.len() {
        0 => ".".to_owned(),
        n if n <= 16 => parts.join("/"),
        n => format!("{}/…/{} ({n} deep)", parts[..8].join("/"), parts[n - 4..].join("/")),
    }
}

fn size(n: u64) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n => format!("{n} bytes"),
    }
}

/// What becomes of symbolic links in a copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Made again as links, pointing where they pointed (never followed).
    Keep,
    /// Left out.
    Leave,
}

/// How a copy is made. FIFOs, sockets and devices are always left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyOptions {
    pub links: Links,
    /// Regular files larger than this are left out.
    pub max_file: Option<u64>,
    pub bounds: Bounds,
}

impl CopyOptions {
    /// A codebase's copy: links kept as links, every file, the default bounds.
    pub fn codebase() -> CopyOptions {
        CopyOptions { links: Links::Keep, max_file: None, bounds: Bounds::default() }
    }
}

/// What a copy made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Copied {
    /// Entries seen in the tree.
    pub entries: u64,
    /// Bytes of files written.
    pub bytes: u64,
    /// Entries not copied: links (with [`Links::Leave`]), FIFOs, sockets, devices,
    /// files over the copy's `max_file`.
    pub left_out: u64,
}

/// A copy of a codebase into a run's scratch folder: links kept as links, the default
/// bounds.
pub fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    copy(from, to, &CopyOptions::codebase()).map(drop).map_err(io::Error::from)
}

/// Copies the tree at `from` (the root itself may be a link: it is the caller's) into
/// `to`, made if it is not there. Folders are made `(mode & 0755) | 0700` and files
/// `(mode & 0755) | 0600`: the copy is its maker's, to read, change and remove.
pub fn copy(from: &Path, to: &Path, how: &CopyOptions) -> Result<Copied, TreeError> {
    let mut src = Walker::open(from, Some(how.bounds))?;
    let here = PathBuf::new();
    fs::create_dir_all(to).map_err(|source| TreeError::Write { path: here.clone(), source })?;
    let mut dst: OwnedFd = nix::fcntl::open(to, DIR_FLAGS, Mode::empty()).map_err(write_at(&here))?;
    // The identity of each folder of the copy above the one being filled.
    let mut dst_above: Vec<Id> = Vec::new();
    let mut copied = Copied::default();
    loop {
        let Some((name, _)) = src.next() else {
            if src.ascend()?.is_none() {
                break;
            }
            let up = climb(&dst).map_err(|e| write_at(&src.rel(None))(e))?;
            if Some(id(&fstat(&up).map_err(|e| write_at(&src.rel(None))(e))?)) != dst_above.pop() {
                return Err(TreeError::Write { path: src.rel(None), source: moved() });
            }
            dst = up;
            continue;
        };
        let path = || src.rel(Some(&name));
        let st = src.stat(&name)?;
        match kind(&st) {
            SFlag::S_IFDIR => {
                src.descend(name.clone(), &st)?;
                let path = src.rel(None);
                mkdirat(&dst, name.as_c_str(), Mode::S_IRWXU).map_err(write_at(&path))?;
                let child =
                    openat(&dst, name.as_c_str(), DIR_FLAGS, Mode::empty()).map_err(write_at(&path))?;
                fchmod(&child, Mode::from_bits_truncate((st.st_mode & 0o755) | 0o700))
                    .map_err(write_at(&path))?;
                dst_above.push(id(&fstat(&dst).map_err(write_at(&path))?));
                dst = child;
            }
            SFlag::S_IFREG => {
                let len = st.st_size.max(0) as u64;
                if how.max_file.is_some_and(|max| len > max) {
                    copied.left_out += 1;
                    continue;
                }
                if copied.bytes.saturating_add(len) > how.bounds.bytes {
                    return Err(TreeError::Bound {
                        bound: Bound::Bytes,
                        limit: how.bounds.bytes,
                        path: path(),
                    });
                }
                match copy_file(&src, &name, &st, &dst, how.bounds.bytes - copied.bytes)? {
                    Some(n) => copied.bytes += n,
                    None => copied.left_out += 1,
                }
            }
            SFlag::S_IFLNK if how.links == Links::Keep => {
                let target = readlinkat(&src.fd, name.as_c_str()).map_err(read_at(&path()))?;
                symlinkat(target.as_os_str(), &dst, name.as_c_str()).map_err(write_at(&path()))?;
            }
            _ => copied.left_out += 1,
        }
    }
    copied.entries = src.entries;
    Ok(copied)
}

/// Copies one regular file, at most `room` bytes of it (its size when it was seen:
/// nothing writes the tree while it is copied). `None`: it is no longer a regular file.
fn copy_file(
    src: &Walker,
    name: &CStr,
    st: &FileStat,
    dst: &OwnedFd,
    room: u64,
) -> Result<Option<u64>, TreeError> {
    let path = src.rel(Some(name));
    restore(&src.fd, name, st, 0o400);
    // Never a read that waits: a FIFO put in its place is opened without blocking, and left out.
    let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_NOCTTY | OFlag::O_CLOEXEC;
    let from = openat(&src.fd, name, flags, Mode::empty()).map_err(read_at(&path))?;
    let seen = fstat(&from).map_err(read_at(&path))?;
    if kind(&seen) != SFlag::S_IFREG {
        return Ok(None);
    }
    let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let to = openat(dst, name, flags, Mode::S_IRUSR | Mode::S_IWUSR).map_err(write_at(&path))?;
    let (from, mut to) = (fs::File::from(from), fs::File::from(to));
    let want = (seen.st_size.max(0) as u64).min(room);
    let n = io::copy(&mut from.take(want), &mut to)
        .map_err(|source| TreeError::Write { path: path.clone(), source })?;
    fchmod(&to, Mode::from_bits_truncate((st.st_mode & 0o755) | 0o600)).map_err(write_at(&path))?;
    Ok(Some(n))
}

/// One entry beneath a walk's root, as [`walk`] hands it: its folder's descriptor, its
/// name there, what it is (not what a link points at), and its path from the root.
#[derive(Debug)]
pub struct Entry<'a> {
    pub dir: std::os::fd::BorrowedFd<'a>,
    pub name: &'a CStr,
    pub stat: &'a FileStat,
    pub path: &'a Path,
}

/// Calls `each` on every entry beneath `root` (not the root itself), a folder before
/// what it holds, never following a link. Returns how many entries there were.
pub fn walk(
    root: &Path,
    bounds: &Bounds,
    mut each: impl FnMut(Entry<'_>) -> io::Result<()>,
) -> Result<u64, TreeError> {
    let mut w = Walker::open(root, Some(*bounds))?;
    loop {
        let Some((name, _)) = w.next() else {
            if w.ascend()?.is_none() {
                break;
            }
            continue;
        };
        let st = w.stat(&name)?;
        let path = w.rel(Some(&name));
        each(Entry { dir: w.fd.as_fd(), name: &name, stat: &st, path: &path })
            .map_err(|source| TreeError::Write { path: path.clone(), source })?;
        if kind(&st) == SFlag::S_IFDIR {
            // `each` may have changed it (its owner): seen again before it is entered.
            let st = w.stat(&name)?;
            w.descend(name, &st)?;
        }
    }
    Ok(w.entries)
}

/// Gives `root` and everything beneath it to `uid:gid`: links themselves, never what
/// they point at.
pub fn chown(root: &Path, uid: u32, gid: u32, bounds: &Bounds) -> Result<u64, TreeError> {
    let (uid, gid) = (Some(Uid::from_raw(uid)), Some(Gid::from_raw(gid)));
    let top = PathBuf::new();
    std::os::unix::fs::lchown(root, uid.map(Uid::as_raw), gid.map(Gid::as_raw))
        .map_err(|source| TreeError::Write { path: top, source })?;
    if !fs::symlink_metadata(root).is_ok_and(|m| m.is_dir()) {
        return Ok(0);
    }
    walk(root, bounds, |e| Ok(fchownat(e.dir, e.name, uid, gid, AtFlags::AT_SYMLINK_NOFOLLOW)?))
}

/// Removes `path` and everything beneath it, however deep or however its modes were
/// left (each folder is given `u+rwx` first), never following a link; nothing at `path`
/// is no error. An entry that cannot be removed does not stop the rest: the first such
/// error is returned once everything else is gone.
pub fn remove(path: &Path) -> io::Result<()> {
    let meta = match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        other => other?,
    };
    if !meta.is_dir() {
        return fs::remove_file(path);
    }
    let mut w = Walker::open(path, None)?;
    loop {
        match w.next() {
            Some((name, _)) => {
                // Only folders are left to visit: the rest was removed as it was listed.
                let entered = w.stat(&name).and_then(|st| w.descend(name, &st));
                if let Err(e) = entered {
                    w.failed.get_or_insert(e);
                }
            }
            None => match w.ascend()? {
                None => break,
                Some(name) => {
                    if let Err(e) = unlinkat(&w.fd, name.as_c_str(), UnlinkatFlags::RemoveDir) {
                        w.failed
                            .get_or_insert(TreeError::Write { path: w.rel(Some(&name)), source: e.into() });
                    }
                }
            },
        }
    }
    let failed = w.failed.take();
    drop(w);
    let removed = fs::remove_dir(path);
    match failed {
        Some(e) => Err(e.into()),
        None => removed,
    }
}

/// A folder of the runner's own in the temporary directory, removed with [`remove`]
/// when dropped, whatever was left in it (a `tempfile::TempDir` removes recursively).
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(prefix: &str) -> io::Result<Scratch> {
        Ok(Scratch(tempfile::Builder::new().prefix(prefix).tempdir()?.keep()))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = remove(&self.0);
    }
}

#[cfg(test)]
mod tests;
mod walker;
