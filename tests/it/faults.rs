//! Storage faults under a running server: a data directory that fills up or
//! turns read-only. Every refused write is a typed diagnostic, reads keep
//! working, and nothing acknowledged is lost or changed.

use std::path::Path;

use rmcp::ServiceExt;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use crate::support::{self, BIN, call};

type Client = RunningService<rmcp::RoleClient, ()>;

/// `jacobian serve` whose files may not grow past `max_file_bytes` (the
/// kernel answers EFBIG, as a full disk answers ENOSPC).
async fn serve_with_file_limit(data_dir: &Path, max_file_bytes: Option<u64>) -> Client {
    let mut command = tokio::process::Command::new(BIN);
    command.arg("--data-dir").arg(data_dir).arg("serve");
    if let Some(limit) = max_file_bytes {
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(move || {
                let rlimit = libc::rlimit { rlim_cur: limit, rlim_max: limit };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &rlimit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // Fail the write with EFBIG instead of killing the process.
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                Ok(())
            });
        }
    }
    ().serve(TokioChildProcess::new(command).expect("spawn")).await.expect("initialize")
}

fn entries(tag: &str) -> Value {
    (0..20)
        .map(|i| json!({"type": "finding", "kind": "NOTE", "title": format!("{tag}-{i}"), "body": "y".repeat(8000)}))
        .collect()
}

async fn write(client: &Client, ws: &str, head: u64, tag: &str) -> (Value, bool) {
    let args = json!({"workspace_id": ws, "base_revision": format!("rev-{head}"), "idempotency_key": tag,
                      "entries": entries(tag)});
    call(client, "workspace.write", args).await
}

async fn head(client: &Client, ws: &str) -> String {
    let (resume, is_error) = call(client, "workspace.query", json!({"workspace_id": ws, "view": "RESUME"})).await;
    assert!(!is_error, "{resume}");
    resume["head_revision_id"].as_str().expect("head").to_owned()
}

fn largest_file(dir: &Path) -> u64 {
    std::fs::read_dir(dir).expect("dir").flatten().filter_map(|e| e.metadata().ok()).map(|m| m.len()).max().unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_data_directory_refuses_writes_typed_and_loses_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    drop(support::open(dir.path().to_path_buf()));
    let limit = largest_file(dir.path()) + (1 << 20);
    let client = serve_with_file_limit(dir.path(), Some(limit)).await;
    let (opened, _) =
        call(&client, "workspace.open", json!({"idempotency_key": "open", "title": "fill", "statement": ""})).await;
    let ws = opened["workspace_id"].as_str().expect("workspace").to_owned();
    let mut acknowledged = 0u64;
    let mut episodes: Vec<String> = Vec::new();
    let refusal = loop {
        let (answer, is_error) = write(&client, &ws, acknowledged, &format!("w{acknowledged}")).await;
        if is_error {
            break answer;
        }
        acknowledged += 1;
        assert!(acknowledged < 200, "the file-size limit never bit");
    };
    println!("after {acknowledged} writes: {refusal}");
    assert!(acknowledged > 0);
    assert_eq!(refusal["diagnostic"]["code"], "STORAGE_FAILED", "{refusal}");
    // Reads still answer, and show exactly the acknowledged writes.
    assert_eq!(head(&client, &ws).await, format!("rev-{acknowledged}"));
    // An invocation whose episode cannot be stored is refused typed, never
    // answered with an episode URI that does not exist.
    let mut refused_invokes = 0;
    for n in 2..40u64 {
        let edges: Vec<[u64; 2]> = (1..n).map(|v| [v - 1, v]).collect();
        let input = json!({"vertices": n, "edges": edges});
        let (result, is_error) =
            call(&client, "capability.invoke", json!({"capability_id": "graph.construct.explicit", "input": input}))
                .await;
        if is_error {
            assert_eq!(result["diagnostic"]["code"], "STORAGE_FAILED", "{result}");
            refused_invokes += 1;
        } else {
            episodes.push(result["transport"]["full_result_episode_uri"].as_str().expect("episode uri").to_owned());
        }
    }
    println!("invocations refused while full: {refused_invokes}; stored: {}", episodes.len());
    // Retrying the same write is refused the same way, and changes nothing.
    let (again, is_error) = write(&client, &ws, acknowledged, &format!("w{acknowledged}")).await;
    assert!(is_error && again["diagnostic"]["code"] == "STORAGE_FAILED", "{again}");
    client.cancel().await.expect("shutdown");

    // With room again, the store is intact and the refused write goes through.
    let conn = rusqlite::Connection::open(dir.path().join("jacobian.db")).expect("database opens");
    let integrity: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).expect("check");
    assert_eq!(integrity, "ok");
    drop(conn);
    let runtime = support::open(dir.path().to_path_buf());
    for uri in &episodes {
        jacobian::resources::read(&runtime, uri).unwrap_or_else(|e| panic!("acknowledged {uri}: {e:?}"));
    }
    drop(runtime);
    let client = serve_with_file_limit(dir.path(), None).await;
    assert_eq!(head(&client, &ws).await, format!("rev-{acknowledged}"));
    let (retried, is_error) = write(&client, &ws, acknowledged, &format!("w{acknowledged}")).await;
    assert!(!is_error, "{retried}");
    assert_eq!(retried["revision_id"], format!("rev-{}", acknowledged + 1));
    client.cancel().await.expect("shutdown");
}

/// A bind mount of a directory, unmounted on drop.
struct BindMount(std::path::PathBuf);

impl BindMount {
    fn new(source: &Path, target: &Path) -> BindMount {
        mount(&["--bind", source.to_str().expect("utf-8"), target.to_str().expect("utf-8")]);
        BindMount(target.to_path_buf())
    }

    /// Linux refuses to make a mount read-only while a process holds files
    /// on it open for writing: a server that has just been told to stop may
    /// still be closing its files, so this tries for a while.
    fn set_read_only(&self, read_only: bool) {
        let flags = if read_only { "remount,bind,ro" } else { "remount,bind,rw" };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while try_mount(&["-o", flags, self.0.to_str().expect("utf-8")]).is_err()
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        mount(&["-o", flags, self.0.to_str().expect("utf-8")]);
    }
}

fn try_mount(args: &[&str]) -> Result<(), String> {
    let out = std::process::Command::new("mount").args(args).output().expect("run mount");
    if out.status.success() { Ok(()) } else { Err(String::from_utf8_lossy(&out.stderr).into_owned()) }
}

fn mount(args: &[&str]) {
    if let Err(stderr) = try_mount(args) {
        panic!("mount {args:?}: {stderr} (this test needs root or CAP_SYS_ADMIN, as the test script has)");
    }
}

impl Drop for BindMount {
    fn drop(&mut self) {
        // Lazy: a server still exiting must not leave the mount behind.
        let _ = std::process::Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_read_only_data_directory_is_a_typed_start_up_error_and_loses_nothing() {
    let root = tempfile::tempdir().expect("temp dir");
    let (source, data) = (root.path().join("source"), root.path().join("data"));
    std::fs::create_dir_all(&source).expect("source");
    std::fs::create_dir_all(&data).expect("mount point");
    let mount = BindMount::new(&source, &data);
    let client = serve_with_file_limit(&data, None).await;
    let (opened, _) =
        call(&client, "workspace.open", json!({"idempotency_key": "open", "title": "ro", "statement": ""})).await;
    let ws = opened["workspace_id"].as_str().expect("workspace").to_owned();
    let (first, is_error) = write(&client, &ws, 0, "w0").await;
    assert!(!is_error, "{first}");
    client.cancel().await.expect("shutdown");

    // A server killed outright leaves SQLite's write-ahead log and its index
    // behind, and with them SQLite opens the database even on a read-only
    // mount (read-only, without a word): the start must still refuse.
    let mut crashed = std::process::Command::new(BIN)
        .arg("--data-dir")
        .arg(&data)
        .arg("serve")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn serve");
    let (wal, shm) = (data.join("jacobian.db-wal"), data.join("jacobian.db-shm"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !(wal.exists() && shm.exists()) && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    crashed.kill().expect("kill serve");
    crashed.wait().expect("reap serve");
    assert!(wal.exists() && shm.exists(), "the killed server left no write-ahead log to open with");

    // Linux refuses to make a mount read-only while a process holds files on
    // it open for writing, so a running server never sees the change; the
    // next start does, and refuses in one typed line.
    mount.set_read_only(true);
    let out = std::process::Command::new(BIN)
        .arg("--data-dir")
        .arg(&data)
        .arg("serve")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run serve");
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let envelope: Value =
        serde_json::from_str(stderr.lines().last().unwrap_or_default()).unwrap_or_else(|_| panic!("{stderr}"));
    assert_eq!(envelope["error_type"], "unavailable", "{envelope}");
    assert!(envelope["error"].as_str().unwrap_or_default().contains(data.to_str().expect("utf-8")), "{envelope}");

    mount.set_read_only(false);
    let client = serve_with_file_limit(&data, None).await;
    assert_eq!(head(&client, &ws).await, "rev-1");
    let (second, is_error) = write(&client, &ws, 1, "w1").await;
    assert!(!is_error, "{second}");
    assert_eq!(second["revision_id"], "rev-2");
    client.cancel().await.expect("shutdown");
}
