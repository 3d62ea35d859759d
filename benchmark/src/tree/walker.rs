//! The walk every operation of `tree` makes: one folder open at a time, entered by
//! name beneath its parent's descriptor (`O_NOFOLLOW`) and left through `..` (checked
//! to be the folder it came from), with what is left to visit at each level on an
//! explicit stack.

use std::ffi::{CStr, CString, OsStr};
use std::fs;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::dir::{Dir, Type};
use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, openat};
use nix::sys::stat::{FchmodatFlags, FileStat, Mode, SFlag, fchmodat, fstat, fstatat};
use nix::unistd::{UnlinkatFlags, unlinkat};

use super::{Bound, Bounds, TreeError};

pub(super) const DIR_FLAGS: OFlag =
    OFlag::O_RDONLY.union(OFlag::O_DIRECTORY).union(OFlag::O_NOFOLLOW).union(OFlag::O_CLOEXEC);

/// A folder's device and inode.
pub(super) type Id = (u64, u64);

pub(super) fn id(st: &FileStat) -> Id {
    (st.st_dev, st.st_ino)
}

pub(super) fn kind(st: &FileStat) -> SFlag {
    SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits())
}

pub(super) fn read_at(path: &Path) -> impl FnOnce(Errno) -> TreeError + '_ {
    move |e| TreeError::Read { path: path.to_owned(), source: e.into() }
}

pub(super) fn write_at(path: &Path) -> impl FnOnce(Errno) -> TreeError + '_ {
    move |e| TreeError::Write { path: path.to_owned(), source: e.into() }
}

/// Why a walk stops where `..` is not the folder it came down from.
pub(super) fn moved() -> io::Error {
    io::Error::other(
        "the folder above is not the one the walk came from (the tree was moved while it was walked)",
    )
}

/// The folder above `dir`.
pub(super) fn climb(dir: &OwnedFd) -> nix::Result<OwnedFd> {
    openat(dir, c"..", OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC, Mode::empty())
}

/// Gives `name` in `dir` the owner's bits `want` it lacks, as far as this process may
/// (its owner or root); if it may not, the read that follows says why.
pub(super) fn restore(dir: &OwnedFd, name: &CStr, st: &FileStat, want: u32) {
    let mode = st.st_mode & 0o7777;
    if mode & want == want {
        return;
    }
    let to = Mode::from_bits_truncate(mode | if kind(st) == SFlag::S_IFDIR { 0o700 } else { want });
    // Not through a link (`st` says it is none; glibc refuses the flag where the kernel cannot).
    if let Err(Errno::EOPNOTSUPP) = fchmodat(dir, name, to, FchmodatFlags::NoFollowSymlink) {
        let _ = fchmodat(dir, name, to, FchmodatFlags::FollowSymlink);
    }
}

/// One folder of a tree open at a time, the way back up by name, and what is left to
/// visit at each level.
pub(super) struct Walker {
    /// The folder being visited.
    pub(super) fd: OwnedFd,
    here: Id,
    /// Its entries not yet visited: names, with their type where the listing said.
    pending: Vec<(CString, Option<Type>)>,
    /// The folders above it, from the root down.
    above: Vec<Level>,
    /// Its path from the root: their names.
    path: PathBuf,
    /// `None`: removing (each non-folder is removed as it is listed, no bound holds).
    bounds: Option<Bounds>,
    pub(super) entries: u64,
    /// While removing: the first entry that could not be removed.
    pub(super) failed: Option<TreeError>,
}

struct Level {
    /// The name of the folder below it (the one being visited, or on the way to it).
    name: CString,
    here: Id,
    pending: Vec<(CString, Option<Type>)>,
}

impl Walker {
    pub(super) fn open(root: &Path, bounds: Option<Bounds>) -> Result<Walker, TreeError> {
        let top = PathBuf::new();
        let want = if bounds.is_some() { 0o500 } else { 0o700 };
        if let Ok(meta) = fs::metadata(root) {
            use std::os::unix::fs::PermissionsExt;
            let mode = meta.permissions().mode() & 0o7777;
            if meta.is_dir() && mode & want != want {
                let _ = fs::set_permissions(root, fs::Permissions::from_mode(mode | 0o700));
            }
        }
        // The root is the caller's: a link to it is followed, nothing beneath it is.
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        let fd = nix::fcntl::open(root, flags, Mode::empty()).map_err(read_at(&top))?;
        let here = id(&fstat(&fd).map_err(read_at(&top))?);
        let mut w = Walker {
            fd,
            here,
            pending: Vec::new(),
            above: Vec::new(),
            path: PathBuf::new(),
            bounds,
            entries: 0,
            failed: None,
        };
        w.list()?;
        Ok(w)
    }

    /// The path of the folder being visited, or of `name` in it, from the root.
    pub(super) fn rel(&self, name: Option<&CStr>) -> PathBuf {
        match name {
            Some(name) => self.path.join(OsStr::from_bytes(name.to_bytes())),
            None => self.path.clone(),
        }
    }

    pub(super) fn next(&mut self) -> Option<(CString, Option<Type>)> {
        self.pending.pop()
    }

    pub(super) fn stat(&self, name: &CStr) -> Result<FileStat, TreeError> {
        fstatat(&self.fd, name, AtFlags::AT_SYMLINK_NOFOLLOW).map_err(|e| read_at(&self.rel(Some(name)))(e))
    }

    /// Lists the folder being visited; while removing, removes what is not a folder.
    fn list(&mut self) -> Result<(), TreeError> {
        let listing = self.fd.try_clone().map_err(|source| TreeError::Read { path: self.rel(None), source });
        let mut dir = listing.and_then(|fd| Dir::from_fd(fd).map_err(|e| read_at(&self.rel(None))(e)))?;
        for entry in dir.iter() {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) if self.bounds.is_none() => {
                    self.failed.get_or_insert(read_at(&self.rel(None))(e));
                    break;
                }
                Err(e) => return Err(read_at(&self.rel(None))(e)),
            };
            let name = entry.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            let mut ty = entry.file_type();
            let Some(bounds) = self.bounds else {
                if ty.is_none() {
                    ty = fstatat(&self.fd, name, AtFlags::AT_SYMLINK_NOFOLLOW)
                        .ok()
                        .filter(|st| kind(st) == SFlag::S_IFDIR)
                        .map(|_| Type::Directory);
                }
                if ty != Some(Type::Directory) {
                    if let Err(e) = unlinkat(&self.fd, name, UnlinkatFlags::NoRemoveDir) {
                        self.failed.get_or_insert(write_at(&self.rel(Some(name)))(e));
                    }
                    continue;
                }
                self.pending.push((name.to_owned(), ty));
                continue;
            };
            self.entries += 1;
            if self.entries > bounds.entries {
                let path = self.rel(Some(name));
                return Err(TreeError::Bound { bound: Bound::Entries, limit: bounds.entries, path });
            }
            self.pending.push((name.to_owned(), ty));
        }
        Ok(())
    }

    /// Enters the folder `name` of the one being visited (`st`: what it is now), given
    /// `u+rwx` first if its owner could not read and enter it.
    pub(super) fn descend(&mut self, name: CString, st: &FileStat) -> Result<(), TreeError> {
        if let Some(bounds) = self.bounds
            && self.above.len() + 1 > bounds.depth
        {
            let path = self.rel(Some(&name));
            return Err(TreeError::Bound { bound: Bound::Depth, limit: bounds.depth as u64, path });
        }
        restore(&self.fd, &name, st, if self.bounds.is_some() { 0o500 } else { 0o700 });
        let path = || self.rel(Some(&name));
        let fd =
            openat(&self.fd, name.as_c_str(), DIR_FLAGS, Mode::empty()).map_err(|e| read_at(&path())(e))?;
        let here = id(&fstat(&fd).map_err(|e| read_at(&path())(e))?);
        let level = Level { name, here: self.here, pending: std::mem::take(&mut self.pending) };
        self.path.push(OsStr::from_bytes(level.name.to_bytes()));
        self.above.push(level);
        self.fd = fd;
        self.here = here;
        self.list()
    }

    /// Leaves the folder being visited for the one above, whose entries it goes on
    /// with; returns the name of the folder it left, `None` at the root.
    pub(super) fn ascend(&mut self) -> Result<Option<CString>, TreeError> {
        let Some(level) = self.above.pop() else { return Ok(None) };
        // (Paths are made for errors only: making one at each step would be quadratic.)
        let up = climb(&self.fd).map_err(|e| read_at(&self.rel(None))(e))?;
        if id(&fstat(&up).map_err(|e| read_at(&self.rel(None))(e))?) != level.here {
            return Err(TreeError::Read { path: self.rel(None), source: moved() });
        }
        self.path.pop();
        self.fd = up;
        self.here = level.here;
        self.pending = level.pending;
        Ok(Some(level.name))
    }
}
