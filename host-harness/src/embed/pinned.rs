//! Model files pinned by sha256: read or mapped, and refused unless they are
//! the pinned bytes.
//!
//! Hashing all-MiniLM-L6-v2's 90 MB of weights was half of a one-query
//! process (~45 ms of ~90), so a file that matched its pin is remembered in a
//! stamp beside it (`NAME.verified`) by its identity: device, inode, size,
//! modification and change times. While that identity holds the file is not
//! hashed again. Any rewrite of the file gives it a new change time, which
//! user space cannot set back; a file changed less than two seconds before
//! it was hashed is not stamped, so a change within the file system's
//! timestamp granularity (2 s on FAT) cannot pass for the stamped file. A
//! directory that cannot be written gets no stamp, and its files are hashed
//! every time.
//!
//! The pin guards against accidents (a partial or corrupt download, another
//! model's files), not against someone who can write the model's directory:
//! they could forge the stamp as easily as replace the weights.

use anyhow::{bail, Context, Result};
use memmap2::{Mmap, MmapOptions};
use sha2::{Digest, Sha256};
use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Reads `path`, failing with `hint` (how to install the model) when the
/// file is missing or is not the pinned one.
pub fn read(path: &Path, sha256: &str, hint: &str) -> Result<Vec<u8>> {
    let bytes =
        std::fs::read(path).with_context(|| format!("cannot read {}; {hint}", path.display()))?;
    check(path, &bytes, sha256, hint)?;
    Ok(bytes)
}

/// Maps `path` read-only and checks it like `read`, unless its stamp says it
/// was checked before. The model's files are only ever replaced by a rename
/// (`scripts/fetch-model.sh`), which leaves a mapping of the old file intact.
pub fn map(path: &Path, sha256: &str, hint: &str) -> Result<Mmap> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot read {}; {hint}", path.display()))?;
    let metadata = file
        .metadata()
        .with_context(|| format!("cannot read {}", path.display()))?;
    // SAFETY: the map is read-only and checked against the pin (or its
    // stamp) before any of it is used; see above for why it is not changed
    // under us.
    let map = unsafe { MmapOptions::new().populate().map(&file) }
        .with_context(|| format!("cannot map {}", path.display()))?;
    // A file that changed size between the two is not the one stamped.
    let identity = identity(&metadata).filter(|_| map.len() as u64 == metadata.len());
    let stamp = stamp_path(path);
    let stamped = identity
        .as_ref()
        .is_some_and(|id| std::fs::read_to_string(&stamp).ok() == Some(stamp_text(sha256, id)));
    if !stamped {
        check(path, &map, sha256, hint)?;
        if let Some(id) = identity.filter(|_| settled(&metadata, SystemTime::now())) {
            // Best effort: without a stamp the file is hashed next time.
            let _ = write_stamp(&stamp, &stamp_text(sha256, &id));
        }
    }
    Ok(map)
}

fn check(path: &Path, bytes: &[u8], sha256: &str, hint: &str) -> Result<()> {
    let actual = format!("{:x}", Sha256::digest(bytes));
    if actual != sha256 {
        bail!(
            "{} has sha256 {actual}, expected {sha256} (corrupt, partial or another model); {hint}",
            path.display()
        );
    }
    Ok(())
}

fn stamp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".verified");
    path.with_file_name(name)
}

/// Written beside and renamed over, so a stamp is never read half written.
fn write_stamp(stamp: &Path, text: &str) -> std::io::Result<()> {
    let mut staged = stamp.as_os_str().to_os_string();
    staged.push(format!(".{}", std::process::id()));
    std::fs::write(&staged, text)?;
    std::fs::rename(&staged, stamp).inspect_err(|_| {
        let _ = std::fs::remove_file(&staged);
    })
}

fn stamp_text(sha256: &str, identity: &str) -> String {
    format!("{sha256} {identity}\n")
}

/// What changes whenever the file's bytes may have: where it is, its size,
/// and its modification and change times to the nanosecond.
#[cfg(unix)]
fn identity(metadata: &Metadata) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    Some(format!(
        "{} {} {} {}.{:09} {}.{:09}",
        metadata.dev(),
        metadata.ino(),
        metadata.size(),
        metadata.mtime(),
        metadata.mtime_nsec(),
        metadata.ctime(),
        metadata.ctime_nsec()
    ))
}

/// Elsewhere there is no change time to trust: always hash.
#[cfg(not(unix))]
fn identity(_: &Metadata) -> Option<String> {
    None
}

/// Whether the file last changed at least two seconds before `now`.
fn settled(metadata: &Metadata, now: SystemTime) -> bool {
    changed(metadata).is_some_and(|at| at + SETTLED_AFTER <= now)
}

const SETTLED_AFTER: Duration = Duration::from_secs(2);

#[cfg(unix)]
fn changed(metadata: &Metadata) -> Option<SystemTime> {
    use std::os::unix::fs::MetadataExt;
    let seconds = u64::try_from(metadata.ctime()).ok()?;
    let nanos = u32::try_from(metadata.ctime_nsec()).ok()?;
    Some(SystemTime::UNIX_EPOCH + Duration::new(seconds, nanos))
}

#[cfg(not(unix))]
fn changed(_: &Metadata) -> Option<SystemTime> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, SeekFrom, Write};

    fn sha(bytes: &[u8]) -> String {
        format!("{:x}", Sha256::digest(bytes))
    }

    #[test]
    fn a_stamped_file_changed_in_place_is_hashed_again_and_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("weights.bin");
        let bytes = vec![7u8; 1 << 16];
        std::fs::write(&path, &bytes).unwrap();
        let pin = sha(&bytes);
        // Changed just now: checked, but not stamped.
        map(&path, &pin, "hint").unwrap();
        assert!(!stamp_path(&path).exists());
        // Settled: stamped, and the stamp is what a later map trusts.
        std::thread::sleep(SETTLED_AFTER + Duration::from_millis(100));
        map(&path, &pin, "hint").unwrap();
        assert!(stamp_path(&path).exists());
        map(&path, &pin, "hint").unwrap();

        // The same size, one byte different, written in place.
        let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.seek(SeekFrom::Start(100)).unwrap();
        file.write_all(&[8]).unwrap();
        drop(file);
        let refused = map(&path, &pin, "hint").unwrap_err();
        assert!(format!("{refused:#}").contains("expected"), "{refused:#}");
    }

    #[test]
    fn a_stamp_for_another_pin_or_another_file_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("weights.bin");
        let pin = sha(b"the real bytes");
        // The file holds other bytes, stamped (with its true identity) as
        // matching their own pin: that stamp says nothing of this pin.
        std::fs::write(&path, b"other").unwrap();
        let metadata = std::fs::metadata(&path).unwrap();
        std::fs::write(
            stamp_path(&path),
            stamp_text(&sha(b"other"), &identity(&metadata).unwrap()),
        )
        .unwrap();
        assert!(map(&path, &sha(b"other"), "hint").is_ok());
        assert!(map(&path, &pin, "hint").is_err());
        // This pin, but another file's identity.
        std::fs::write(stamp_path(&path), stamp_text(&pin, "0 0 5 0.0 0.0")).unwrap();
        assert!(map(&path, &pin, "hint").is_err());
    }

    #[test]
    fn only_a_file_two_seconds_old_is_settled() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"x").unwrap();
        let metadata = std::fs::metadata(&path).unwrap();
        let at = changed(&metadata).unwrap();
        assert!(!settled(
            &metadata,
            at + SETTLED_AFTER - Duration::from_millis(1)
        ));
        assert!(settled(&metadata, at + SETTLED_AFTER));
    }
}
