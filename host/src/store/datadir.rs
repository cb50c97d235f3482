//! The data directory: components, artifacts, install records, the
//! precompiled-code cache and the policy file, kept in its own files unless
//! a PostgreSQL store holds the shared part ([`ObjectStore`]).
//!
//! **Boundary:** everything here goes through a `cap_std::fs::Dir` handle
//! opened once on the data directory. File names are built only from
//! validated digests and fixed names, so no name a request or a bundle
//! supplies can reach outside it. Every write is atomic and durable before it
//! is acknowledged (temporary file, `fsync`, rename, `fsync` of the
//! directory). A content-addressed file is written once; one found present
//! but corrupt (a crash of an older binary, a bad disk) is written again.
//! The directory is created `0700`; the policy's version is its text's
//! digest, and every policy write holds a lock.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use crate::digest::{Digest, canonical_json};

use super::files::{FILE_CHUNK, LocalFile, expect, stream_in};
use super::{FileError, ObjectKind, ObjectStore, PolicyStamp, StoreError, StoredFile};

const COMPONENTS: &str = "components";
const ARTIFACTS: &str = "artifacts";
const FILES: &str = "files";
const CACHE: &str = "cache";
const REGISTRY: &str = "registry";
const TMP: &str = "tmp";
/// The operator policy file inside the data directory.
pub const POLICY_FILE: &str = "policy.toml";

/// Handle on the data directory: the host's own files (the precompiled-code
/// cache, scratch space) and the [`ObjectStore`] it shares with other hosts,
/// which is the directory itself unless a PostgreSQL store is configured.
pub struct DataDir {
    root: Dir,
    path: PathBuf,
    objects: Box<dyn ObjectStore>,
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

fn open_root(path: &Path, subdirectories: &[&str]) -> Result<Dir, StoreError> {
    let open_err = |source| StoreError::Open { path: path.to_owned(), source };
    if !path.exists() {
        // Only its owner may read what a deployment keeps.
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(path).map_err(open_err)?;
    }
    let root = Dir::open_ambient_dir(path, ambient_authority()).map_err(open_err)?;
    for sub in subdirectories {
        root.create_dir_all(sub).map_err(open_err)?;
    }
    Ok(root)
}

impl DataDir {
    /// Open (creating if needed) the data directory at `path`, keeping
    /// components, artifacts, records and policy in it.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let objects = FileObjects {
            root: open_root(path, &[COMPONENTS, ARTIFACTS, FILES, REGISTRY, TMP])?,
            held_policy: Default::default(),
        };
        sweep_partial_uploads(&objects.root);
        Self::with_objects(path, Box::new(objects))
    }

    /// Open the data directory at `path` for this host's own files, with
    /// `objects` as the shared store.
    pub fn with_objects(path: &Path, objects: Box<dyn ObjectStore>) -> Result<Self, StoreError> {
        Ok(DataDir { root: open_root(path, &[CACHE, TMP])?, path: path.to_owned(), objects })
    }

    /// Where it is (for messages only; all access goes through the handle).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Store component bytes under their digest (idempotent).
    pub fn put_component(&self, bytes: &[u8]) -> Result<Digest, StoreError> {
        let digest = Digest::of(bytes);
        self.objects.put(ObjectKind::Component, &digest, bytes)?;
        Ok(digest)
    }

    /// [`DataDir::put_component`] for bytes whose digest is known already
    /// (a bundled component's, computed when the binary was built), at every
    /// start: a copy of the right size is kept without reading it (reading the
    /// portfolio back from a disk busy with writes took hundreds of
    /// milliseconds); one of another size is written again, and one damaged
    /// in place is found when read, since every read re-hashes (and written
    /// again then: `Runtime::component_bytes`).
    pub fn keep_component(&self, digest: &Digest, bytes: &[u8]) -> Result<(), StoreError> {
        if self.objects.size(ObjectKind::Component, digest)? == Some(bytes.len() as u64) {
            return Ok(());
        }
        self.objects.put(ObjectKind::Component, digest, bytes)
    }

    /// Read component bytes, re-hashing them.
    pub fn read_component(&self, digest: &Digest) -> Result<Vec<u8>, StoreError> {
        self.read_verified(ObjectKind::Component, digest)
    }

    /// Store an artifact envelope as canonical JSON; returns its digest.
    pub fn put_artifact(&self, envelope: &serde_json::Value) -> Result<(Digest, u64), StoreError> {
        let bytes = canonical_json(envelope);
        Ok((self.put_canonical(&bytes)?, bytes.len() as u64))
    }

    /// Store artifact bytes that are already canonical JSON.
    pub fn put_canonical(&self, bytes: &[u8]) -> Result<Digest, StoreError> {
        let digest = Digest::of(bytes);
        self.objects.put(ObjectKind::Artifact, &digest, bytes)?;
        Ok(digest)
    }

    /// Read an artifact, re-hashing it.
    pub fn read_artifact(&self, digest: &Digest) -> Result<Vec<u8>, StoreError> {
        self.read_verified(ObjectKind::Artifact, digest)
    }

    /// Store a file streamed from `source` (see [`ObjectStore::put_file`]).
    pub fn put_file(
        &self,
        source: &mut dyn io::Read,
        limit: u64,
        expect: Option<&Digest>,
    ) -> Result<(Digest, u64), FileError> {
        self.objects.put_file(source, limit, expect)
    }

    /// A stored file (not re-hashed here: [`hash_file`](super::hash_file) reads it whole).
    pub fn open_file(&self, digest: &Digest) -> Result<Box<dyn StoredFile>, StoreError> {
        self.objects.open_file(digest)?.ok_or(StoreError::NotFound { what: "file", digest: *digest })
    }

    /// The size of a stored component, without reading it.
    pub fn component_size(&self, digest: &Digest) -> Result<u64, StoreError> {
        self.objects
            .size(ObjectKind::Component, digest)?
            .ok_or(StoreError::NotFound { what: "component", digest: *digest })
    }

    /// The size of a stored artifact, without reading it.
    pub fn artifact_size(&self, digest: &Digest) -> Result<u64, StoreError> {
        self.objects
            .size(ObjectKind::Artifact, digest)?
            .ok_or(StoreError::NotFound { what: "artifact", digest: *digest })
    }

    /// Precompiled code for `digest` under engine key `key`, if present and intact.
    pub fn cached_code(&self, key: &str, digest: &Digest) -> Option<Vec<u8>> {
        let dir = format!("{CACHE}/{}", sanitize_key(key));
        let code = self.root.read(format!("{dir}/{}.cwasm", digest.to_hex())).ok()?;
        let recorded = self.root.read_to_string(format!("{dir}/{}.cwasm.sha256", digest.to_hex())).ok()?;
        (Digest::of(&code).to_hex() == recorded.trim()).then_some(code)
    }

    /// Store precompiled code for `digest` under engine key `key`.
    pub fn put_cached_code(&self, key: &str, digest: &Digest, code: &[u8]) -> Result<(), StoreError> {
        let dir = format!("{CACHE}/{}", sanitize_key(key));
        self.root.create_dir_all(&dir).map_err(|source| StoreError::Io { what: dir.clone(), source })?;
        write_replace(&self.root, &format!("{dir}/{}.cwasm", digest.to_hex()), code)?;
        write_replace(
            &self.root,
            &format!("{dir}/{}.cwasm.sha256", digest.to_hex()),
            Digest::of(code).to_hex().as_bytes(),
        )
    }

    /// Write the install record of a component.
    pub fn put_record(&self, digest: &Digest, record: &serde_json::Value) -> Result<(), StoreError> {
        self.objects.put_record(digest, record)
    }

    /// Every install record, in digest order.
    pub fn records(&self) -> Result<Vec<serde_json::Value>, StoreError> {
        self.objects.records()
    }

    /// The policy text, if present.
    pub fn read_policy(&self) -> Result<Option<String>, StoreError> {
        self.objects.read_policy()
    }

    /// Replace the policy atomically.
    pub fn write_policy(&self, text: &str) -> Result<(), StoreError> {
        self.objects.write_policy(text)
    }

    /// Replace the policy only if its stamp is still `expected`.
    pub fn write_policy_if(&self, expected: PolicyStamp, text: &str) -> Result<bool, StoreError> {
        self.objects.write_policy_if(expected, text)
    }

    /// Write the policy only if there is none yet.
    pub fn create_policy(&self, text: &str) -> Result<(), StoreError> {
        self.objects.create_policy(text)
    }

    /// The policy's current version (to notice operator changes).
    pub fn policy_stamp(&self) -> PolicyStamp {
        self.objects.policy_stamp()
    }

    fn read_verified(&self, kind: ObjectKind, digest: &Digest) -> Result<Vec<u8>, StoreError> {
        let what = kind.as_str();
        let bytes = self.objects.get(kind, digest)?.ok_or(StoreError::NotFound { what, digest: *digest })?;
        let actual = Digest::of(&bytes);
        if actual != *digest {
            return Err(StoreError::DigestMismatch { what, expected: *digest, actual });
        }
        Ok(bytes)
    }
}

/// The shared store kept in the data directory's own files.
struct FileObjects {
    root: Dir,
    /// The policy file the last stamp described, held open (see
    /// [`ObjectStore::policy_stamp`] below), with that stamp.
    held_policy: std::sync::Mutex<Option<(u128, cap_std::fs::File)>>,
}

impl FileObjects {
    fn name(kind: ObjectKind, digest: &Digest) -> String {
        match kind {
            ObjectKind::Component => component_name(digest),
            ObjectKind::Artifact => artifact_name(digest),
        }
    }
}

impl ObjectStore for FileObjects {
    fn put(&self, kind: ObjectKind, digest: &Digest, bytes: &[u8]) -> Result<(), StoreError> {
        let name = Self::name(kind, digest);
        // Present and whole: nothing to do. Present but not these bytes:
        // written again. (`bytes` are the ones `digest` names, so comparing
        // them is re-hashing, at a tenth of the cost.)
        let intact = self.root.metadata(&name).is_ok_and(|m| m.len() == bytes.len() as u64)
            && self.root.read(&name).is_ok_and(|stored| stored == bytes);
        if intact {
            return Ok(());
        }
        write_replace(&self.root, &name, bytes)
    }

    fn get(&self, kind: ObjectKind, digest: &Digest) -> Result<Option<Vec<u8>>, StoreError> {
        let name = Self::name(kind, digest);
        match self.root.read(&name) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(StoreError::Io { what: name, source }),
        }
    }

    fn size(&self, kind: ObjectKind, digest: &Digest) -> Result<Option<u64>, StoreError> {
        let name = Self::name(kind, digest);
        match self.root.metadata(&name) {
            Ok(metadata) => Ok(Some(metadata.len())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(StoreError::Io { what: name, source }),
        }
    }

    fn put_record(&self, digest: &Digest, record: &serde_json::Value) -> Result<(), StoreError> {
        let bytes = crate::json::pretty_bytes(&record);
        write_replace(&self.root, &format!("{REGISTRY}/{}.json", digest.to_hex()), &bytes)
    }

    fn records(&self) -> Result<Vec<serde_json::Value>, StoreError> {
        let io_err = |source| StoreError::Io { what: REGISTRY.into(), source };
        let mut names: Vec<String> = self
            .root
            .read_dir(REGISTRY)
            .map_err(io_err)?
            .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
            .filter(|name| name.ends_with(".json"))
            .collect();
        names.sort();
        let mut records = Vec::new();
        for name in names {
            let text = self.root.read(format!("{REGISTRY}/{name}")).map_err(io_err)?;
            let value = serde_json::from_slice(&text).map_err(|e| StoreError::Io {
                what: format!("{REGISTRY}/{name}"),
                source: io::Error::new(io::ErrorKind::InvalidData, e),
            })?;
            records.push(value);
        }
        Ok(records)
    }

    fn read_policy(&self) -> Result<Option<String>, StoreError> {
        match self.root.read_to_string(POLICY_FILE) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(StoreError::Io { what: POLICY_FILE.into(), source }),
        }
    }

    fn write_policy(&self, text: &str) -> Result<(), StoreError> {
        let _lock = self.lock_policy()?;
        write_replace(&self.root, POLICY_FILE, text.as_bytes())
    }

    fn write_policy_if(&self, expected: PolicyStamp, text: &str) -> Result<bool, StoreError> {
        // Every writer of this directory's policy holds the lock from its
        // check to its rename, so no two writers both see `expected`.
        let _lock = self.lock_policy()?;
        if self.policy_stamp() != expected {
            return Ok(false);
        }
        write_replace(&self.root, POLICY_FILE, text.as_bytes()).map(|()| true)
    }

    fn create_policy(&self, text: &str) -> Result<(), StoreError> {
        let _lock = self.lock_policy()?;
        if self.root.exists(POLICY_FILE) {
            return Ok(());
        }
        write_replace(&self.root, POLICY_FILE, text.as_bytes())
    }

    fn put_file(
        &self,
        source: &mut dyn io::Read,
        limit: u64,
        expected: Option<&Digest>,
    ) -> Result<(Digest, u64), FileError> {
        use std::io::Write as _;
        let temp = format!("{TMP}/{}-{}.part", std::process::id(), TEMP_COUNTER.fetch_add(1, Ordering::Relaxed));
        let io_err = |source| StoreError::Io { what: temp.clone(), source };
        // Removed on every way out but the rename.
        struct Partial<'a>(&'a Dir, &'a str);
        impl Drop for Partial<'_> {
            fn drop(&mut self) {
                let _ = self.0.remove_file(self.1);
            }
        }
        let file = self.root.create(&temp).map_err(io_err)?.into_std();
        let _partial = Partial(&self.root, &temp);
        let mut writer = io::BufWriter::with_capacity(FILE_CHUNK, file);
        let (digest, size) = stream_in(source, limit, |chunk| writer.write_all(chunk).map_err(io_err))?;
        let digest = expect(expected, digest)?;
        let file = writer.into_inner().map_err(|e| io_err(e.into_error()))?;
        let name = file_name(&digest);
        // Renamed over a copy already there: uploading again repairs a damaged one.
        file.sync_all().map_err(io_err)?;
        drop(file);
        self.root.rename(&temp, &self.root, &name).map_err(io_err)?;
        let directory = self.root.open_with(FILES, cap_std::fs::OpenOptions::new().read(true)).map_err(io_err)?;
        directory.into_std().sync_all().map_err(io_err)?;
        Ok((digest, size))
    }

    fn open_file(&self, digest: &Digest) -> Result<Option<Box<dyn StoredFile>>, StoreError> {
        let name = file_name(digest);
        match self.root.open(&name) {
            Ok(file) => {
                let file = file.into_std();
                let size = file.metadata().map_err(|source| StoreError::Io { what: name, source })?.len();
                Ok(Some(Box::new(LocalFile(file, size))))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(StoreError::Io { what: name, source }),
        }
    }

    fn policy_stamp(&self) -> PolicyStamp {
        // The file's identity, size and change times: one stat a call, where
        // opening, reading and hashing the text took six system calls, a
        // tenth of a trivial invoke. It changes whenever the text does:
        // every writer here replaces the file (a new inode), and the file the
        // current stamp describes is held open, so its inode number cannot be
        // reused by a later file meanwhile; an edit in place changes the
        // change time. Times alone cannot tell apart two edits of one size
        // within one tick of the file system's clock, so while the file
        // changed less than `TIMES_SETTLE` ago, and always for a symbolic
        // link (whose own times say nothing of its target), the text's
        // digest is part of the stamp too.
        let meta = self.root.symlink_metadata(POLICY_FILE).ok()?;
        if !meta.is_file() {
            return Some(stamp_of(&meta, Some(&self.root.read(POLICY_FILE).ok()?)));
        }
        let stamp = stamp_of(&meta, None);
        let mut held = self.held_policy.lock().unwrap_or_else(|e| e.into_inner());
        if held.as_ref().is_none_or(|(described, _)| *described != stamp) {
            *held = None;
            let file = self.root.open(POLICY_FILE).ok()?;
            // Replaced between the two looks: no stamp yet.
            if stamp_of(&file.metadata().ok()?, None) != stamp {
                return None;
            }
            *held = Some((stamp, file));
        }
        drop(held);
        if changed_lately(&meta) {
            return Some(stamp_of(&meta, Some(&self.root.read(POLICY_FILE).ok()?)));
        }
        Some(stamp)
    }
}

/// How long after a change the policy file's times are not trusted alone
/// (many clock ticks of any file system, and clocks a little apart).
const TIMES_SETTLE: std::time::Duration = std::time::Duration::from_secs(2);

/// Whether a file changed less than [`TIMES_SETTLE`] ago (or its change time is ahead of the clock).
fn changed_lately(meta: &cap_std::fs::Metadata) -> bool {
    use cap_std::fs::MetadataExt as _;
    let changed = std::time::Duration::new(meta.ctime().max(0) as u64, meta.ctime_nsec().clamp(0, 999_999_999) as u32);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    now.checked_sub(changed).is_none_or(|age| age < TIMES_SETTLE)
}

/// A file's stamp: its device, inode, size and modification and change
/// times, and the digest of `text` when given.
fn stamp_of(meta: &cap_std::fs::Metadata, text: Option<&[u8]>) -> u128 {
    use cap_std::fs::MetadataExt as _;
    let fields =
        [meta.dev(), meta.ino(), meta.size(), meta.mtime() as u64, meta.mtime_nsec() as u64, meta.ctime() as u64];
    let mut bytes: Vec<u8> = fields.iter().flat_map(|f| f.to_le_bytes()).collect();
    bytes.extend_from_slice(&meta.ctime_nsec().to_le_bytes());
    if let Some(text) = text {
        bytes.extend_from_slice(Digest::of(text).bytes());
    }
    u128::from_be_bytes(Digest::of(&bytes).bytes()[..16].try_into().unwrap_or_default())
}

impl FileObjects {
    /// An exclusive lock on the policy, held until dropped.
    fn lock_policy(&self) -> Result<std::fs::File, StoreError> {
        let io_err = |source| StoreError::Io { what: "policy.lock".into(), source };
        let file = self
            .root
            .open_with("policy.lock", cap_std::fs::OpenOptions::new().create(true).truncate(false).write(true))
            .map_err(io_err)?
            .into_std();
        file.lock().map_err(io_err)?;
        Ok(file)
    }
}

/// Write `bytes` to `name` atomically and durably: a temporary file, synced,
/// renamed into place, and the directory that now names it synced, so an
/// acknowledged write survives a power loss whole or not at all.
fn write_replace(root: &Dir, name: &str, bytes: &[u8]) -> Result<(), StoreError> {
    use std::io::Write as _;
    let io_err = |source| StoreError::Io { what: name.to_owned(), source };
    let temp = format!("{TMP}/{}-{}", std::process::id(), TEMP_COUNTER.fetch_add(1, Ordering::Relaxed));
    let mut file = root.create(&temp).map_err(io_err)?.into_std();
    file.write_all(bytes).and_then(|()| file.sync_all()).map_err(io_err)?;
    drop(file);
    root.rename(&temp, root, name).map_err(io_err)?;
    let parent = name.rsplit_once('/').map_or(".", |(parent, _)| parent);
    // A directory opened for reading (not a path-only handle, which cannot be synced).
    let directory = root.open_with(parent, cap_std::fs::OpenOptions::new().read(true)).map_err(io_err)?;
    directory.into_std().sync_all().map_err(io_err)
}

fn component_name(digest: &Digest) -> String {
    format!("{COMPONENTS}/{}.wasm", digest.to_hex())
}

/// Remove partial uploads a crash left in `tmp/` once a day old (another
/// process may be writing a younger one right now).
fn sweep_partial_uploads(root: &Dir) {
    let Ok(entries) = root.read_dir(TMP) else { return };
    let day = std::time::Duration::from_secs(86_400);
    for entry in entries.flatten() {
        let Ok(name) = entry.file_name().into_string() else { continue };
        let old = entry.metadata().ok().and_then(|m| m.modified().ok()).and_then(|t| t.into_std().elapsed().ok());
        if name.ends_with(".part") && old.is_some_and(|age| age > day) {
            let _ = root.remove_file(format!("{TMP}/{name}"));
        }
    }
}

fn file_name(digest: &Digest) -> String {
    format!("{FILES}/{}", digest.to_hex())
}

fn artifact_name(digest: &Digest) -> String {
    format!("{ARTIFACTS}/{}.json", digest.to_hex())
}

fn sanitize_key(key: &str) -> String {
    key.chars().filter(|c| c.is_ascii_alphanumeric()).collect()
}
