use super::walker::{DIR_FLAGS, kind};
use super::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};

/// A folder `d` in a folder `d` … `depth` deep under `root`, made by name (its path
/// is longer than any system call takes), with a file at the bottom.
fn deep(root: &Path, depth: usize) {
    let mut fd = nix::fcntl::open(root, DIR_FLAGS, Mode::empty()).unwrap();
    for _ in 0..depth {
        mkdirat(&fd, c"d", Mode::S_IRWXU).unwrap();
        fd = openat(&fd, c"d", DIR_FLAGS, Mode::empty()).unwrap();
    }
    let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_CLOEXEC;
    drop(openat(&fd, c"bottom.txt", flags, Mode::S_IRUSR).unwrap());
}

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
}

fn set_mode(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_tree_20000_deep_is_copied_to_its_depth_bound_walked_to_it_and_removed_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    fs::create_dir(&tree).unwrap();
    fs::write(tree.join("top.txt"), "top").unwrap();
    deep(&tree, 20_000);

    let err = copy(&tree, &tmp.path().join("copy"), &CopyOptions::codebase()).unwrap_err();
    match &err {
        TreeError::Bound { bound: Bound::Depth, limit: 256, path } => {
            assert_eq!(path.iter().count(), 257)
        }
        other => panic!("{other}"),
    }
    assert!(err.of_the_tree());
    let said = err.to_string();
    assert!(
        said.starts_with(
            "past the tree's bound of 256 folders deep (depth) at `d/d/d/d/d/d/d/d/…/d/d/d/d (257 deep)`"
        ),
        "{said}"
    );

    let err = walk(&tree, &Bounds::default(), |_| Ok(())).unwrap_err();
    assert!(matches!(err, TreeError::Bound { bound: Bound::Depth, .. }), "{err}");
    // Within a larger bound, the walk goes all the way down.
    let bounds = Bounds { depth: 30_000, ..Bounds::default() };
    assert_eq!(walk(&tree, &bounds, |_| Ok(())).unwrap(), 20_000 + 2);

    remove(&tree).unwrap();
    assert!(!tree.exists());
    remove(&tree).unwrap();
    remove(&tmp.path().join("copy")).unwrap();
}

/// A tree with a folder and a file mode 000, and a folder its owner may read but not enter.
fn locked(root: &Path) -> PathBuf {
    let tree = root.join("tree");
    fs::create_dir_all(tree.join("locked/inner")).unwrap();
    fs::write(tree.join("locked/inner/a.txt"), "a").unwrap();
    fs::write(tree.join("locked/b.txt"), "b").unwrap();
    fs::write(tree.join("none.txt"), "none").unwrap();
    fs::create_dir(tree.join("no-x")).unwrap();
    fs::write(tree.join("no-x/c.txt"), "c").unwrap();
    set_mode(&tree.join("locked/inner"), 0o000);
    set_mode(&tree.join("locked"), 0o000);
    set_mode(&tree.join("none.txt"), 0o000);
    set_mode(&tree.join("no-x"), 0o400);
    tree
}

fn copied_and_removed(root: &Path) {
    let tree = locked(root);
    let to = root.join("copy");
    copy_tree(&tree, &to).unwrap();
    assert_eq!(fs::read_to_string(to.join("locked/inner/a.txt")).unwrap(), "a");
    assert_eq!(fs::read_to_string(to.join("locked/b.txt")).unwrap(), "b");
    assert_eq!(fs::read_to_string(to.join("none.txt")).unwrap(), "none");
    assert_eq!(fs::read_to_string(to.join("no-x/c.txt")).unwrap(), "c");
    // Restored before they were read: u+rwx for the folders, u+r for the file.
    assert_eq!(mode(&tree.join("locked")), 0o700);
    assert_eq!(mode(&tree.join("locked/inner")), 0o700);
    assert_eq!(mode(&tree.join("no-x")), 0o700);
    assert_eq!(mode(&tree.join("none.txt")), 0o400);
    // The copy is its maker's to read and remove.
    assert_eq!(mode(&to.join("locked")), 0o700);
    assert_eq!(mode(&to.join("none.txt")), 0o600);
    set_mode(&tree.join("locked"), 0o000);
    set_mode(&tree.join("no-x"), 0o000);
    remove(&tree).unwrap();
    remove(&to).unwrap();
    assert!(!tree.exists() && !to.exists());
}

#[test]
fn folders_and_files_mode_000_are_restored_copied_and_removed() {
    let tmp = tempfile::tempdir().unwrap();
    copied_and_removed(tmp.path());
}

/// The same as another user than root, who owns the tree and cannot read past its
/// modes without restoring them: this test binary again, as nobody, where the tests
/// run as root.
#[test]
fn modes_are_restored_by_their_owner_without_root() {
    if !nix::unistd::geteuid().is_root() {
        let tmp = tempfile::tempdir().unwrap();
        return copied_and_removed(tmp.path());
    }
    let Some(setpriv) = ["/usr/bin/setpriv", "/bin/setpriv"].into_iter().find(|p| Path::new(p).exists())
    else {
        return eprintln!("no setpriv: the test runs as root only");
    };
    let tmp = tempfile::tempdir().unwrap();
    set_mode(tmp.path(), 0o755);
    let dir = tmp.path().join("nobody");
    fs::create_dir(&dir).unwrap();
    std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
    let out = std::process::Command::new(setpriv)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(std::env::current_exe().unwrap())
        .args(["tree::tests::as_nobody", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env("REXBENCH_TREE_TEST_DIR", &dir)
        .output()
        .unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{said}");
    assert!(said.contains("1 passed"), "{said}");
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
}

#[test]
#[ignore = "run by modes_are_restored_by_their_owner_without_root, as another user"]
fn as_nobody() {
    let dir = PathBuf::from(std::env::var_os("REXBENCH_TREE_TEST_DIR").expect("run by its parent test"));
    assert!(!nix::unistd::geteuid().is_root());
    // Without the restore, its owner cannot read it.
    let tree = locked(&dir);
    assert_eq!(fs::read_dir(tree.join("locked")).unwrap_err().kind(), io::ErrorKind::PermissionDenied);
    remove(&tree).unwrap();
    copied_and_removed(&dir);
}

#[test]
fn a_link_is_copied_as_a_link_walked_as_itself_and_never_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("secret.txt"), "secret").unwrap();
    let tree = tmp.path().join("tree");
    fs::create_dir(&tree).unwrap();
    symlink(&outside, tree.join("dir-link")).unwrap();
    symlink(outside.join("secret.txt"), tree.join("file-link")).unwrap();
    symlink("nowhere", tree.join("dangling")).unwrap();

    let to = tmp.path().join("copy");
    let copied = copy(&tree, &to, &CopyOptions::codebase()).unwrap();
    assert_eq!(copied, Copied { entries: 3, bytes: 0, left_out: 0 });
    assert_eq!(fs::read_link(to.join("dir-link")).unwrap(), outside);
    assert_eq!(fs::read_link(to.join("file-link")).unwrap(), outside.join("secret.txt"));
    assert_eq!(fs::read_link(to.join("dangling")).unwrap(), Path::new("nowhere"));

    let left = tmp.path().join("left");
    let copied =
        copy(&tree, &left, &CopyOptions { links: Links::Leave, max_file: None, bounds: Bounds::default() })
            .unwrap();
    assert_eq!(copied.left_out, 3);
    assert_eq!(fs::read_dir(&left).unwrap().count(), 0);

    let mut seen = Vec::new();
    walk(&tree, &Bounds::default(), |e| {
        assert_eq!(kind(e.stat), SFlag::S_IFLNK);
        seen.push(e.path.to_owned());
        Ok(())
    })
    .unwrap();
    seen.sort();
    assert_eq!(seen, ["dangling", "dir-link", "file-link"].map(PathBuf::from));

    if nix::unistd::geteuid().is_root() {
        chown(&tree, 65534, 65534, &Bounds::default()).unwrap();
        assert_eq!(fs::symlink_metadata(tree.join("file-link")).unwrap().uid(), 65534);
        assert_eq!(fs::metadata(outside.join("secret.txt")).unwrap().uid(), 0);
        assert_eq!(fs::metadata(&outside).unwrap().uid(), 0);
    }
    remove(&tree).unwrap();
    remove(&to).unwrap();
    assert_eq!(fs::read_to_string(outside.join("secret.txt")).unwrap(), "secret");
}

#[test]
fn the_entries_and_bytes_bounds_stop_a_copy_and_fifos_and_large_files_are_left_out() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    fs::create_dir_all(tree.join("sub")).unwrap();
    for i in 0..20 {
        fs::write(tree.join(format!("sub/{i}.txt")), [b'x'; 60]).unwrap();
    }
    let bounds = Bounds { entries: 10, ..Bounds::default() };
    let how = CopyOptions { links: Links::Keep, max_file: None, bounds };
    match copy(&tree, &tmp.path().join("a"), &how).unwrap_err() {
        TreeError::Bound { bound: Bound::Entries, limit: 10, path } => assert!(path.starts_with("sub")),
        other => panic!("{other}"),
    }
    assert!(matches!(walk(&tree, &bounds, |_| Ok(())), Err(TreeError::Bound { bound: Bound::Entries, .. })));

    let how = CopyOptions {
        links: Links::Keep,
        max_file: None,
        bounds: Bounds { bytes: 100, ..Bounds::default() },
    };
    let err = copy(&tree, &tmp.path().join("b"), &how).unwrap_err();
    assert!(matches!(err, TreeError::Bound { bound: Bound::Bytes, limit: 100, .. }), "{err}");
    assert!(
        err.to_string().starts_with("past the tree's bound of 100 bytes of files (bytes) at `sub/"),
        "{err}"
    );

    assert!(std::process::Command::new("mkfifo").arg(tree.join("fifo")).status().unwrap().success());
    let how = CopyOptions { links: Links::Leave, max_file: Some(50), bounds: Bounds::default() };
    fs::write(tree.join("small.txt"), "small").unwrap();
    let copied = copy(&tree, &tmp.path().join("c"), &how).unwrap();
    assert_eq!(copied, Copied { entries: 23, bytes: 5, left_out: 21 });
    assert_eq!(fs::read_to_string(tmp.path().join("c/small.txt")).unwrap(), "small");
    for dir in ["tree", "a", "b", "c"] {
        remove(&tmp.path().join(dir)).unwrap();
    }
    assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 0);
}
