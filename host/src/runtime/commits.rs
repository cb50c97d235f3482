//! Group commit: the episodes and lines of quick calls answered together on
//! the MCP edge's thread are written in one commit.
//!
//! On stdio every quick call runs on one thread, one after another, and each
//! paid a commit of its own (a third of its host work). A call whose writes
//! are ready joins the queue; the first to join leads: it yields once, so
//! that every call already received runs up to its own writes and joins,
//! then writes the whole queue in one transaction and hands each call its
//! ordinal. No call is answered before its writes are durable (under the
//! database's configured durability), exactly as when it commits alone; a
//! call alone (a sequential client) is written after one yield.

use std::sync::Mutex;

use tokio::sync::oneshot;

use super::experiments::{Experiments, RecordFailure};
use crate::digest::Digest;
use crate::experiments::InvocationRecord;
use crate::store::{DbError, EpisodeRow, EpisodeStore, EpisodeWrite};

/// One call's writes, queued.
struct Queued {
    experiment: String,
    line: InvocationRecord,
    digest: Digest,
    capability_id: String,
    body: Vec<u8>,
    done: oneshot::Sender<Result<u64, RecordFailure>>,
}

/// The calls waiting to be written together.
#[derive(Default)]
pub(super) struct GroupCommit {
    queue: Mutex<Vec<Queued>>,
}

impl GroupCommit {
    /// Write `episode` and `line` (which names it) with whatever other calls
    /// join meanwhile; the line's ordinal once durable.
    pub async fn write(
        &self,
        experiments: &Experiments,
        episodes: &dyn EpisodeStore,
        experiment: &str,
        line: &InvocationRecord,
        episode: &EpisodeRow<'_>,
    ) -> Result<u64, RecordFailure> {
        experiments.count_ahead(experiment, line);
        let (done, written) = oneshot::channel();
        let queued = Queued {
            experiment: experiment.to_owned(),
            line: line.clone(),
            digest: *episode.digest,
            capability_id: episode.capability_id.to_owned(),
            body: episode.body.to_vec(),
            done,
        };
        let leads = {
            let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            queue.push(queued);
            queue.len() == 1
        };
        if leads {
            // Dropped (the call cancelled) before it wrote, the leader still writes the queue.
            let lead = Lead { group: self, experiments, episodes };
            tokio::task::yield_now().await;
            // Another thread's write (a workspace's, a long call's) would
            // block this thread, and every request on it, until it is done.
            episodes.writer_free().await;
            drop(lead);
        }
        written.await.unwrap_or_else(|_| {
            Err(RecordFailure::Episode(DbError::Corrupt("the group commit ended without writing this call".into())))
        })
    }

    /// Write everything queued, in one commit where the store can.
    fn commit(&self, experiments: &Experiments, episodes: &dyn EpisodeStore) {
        let batch = std::mem::take(&mut *self.queue.lock().unwrap_or_else(|e| e.into_inner()));
        let writes: Vec<EpisodeWrite<'_>> = batch
            .iter()
            .map(|q| EpisodeWrite {
                experiment: &q.experiment,
                record: &q.line,
                episode: EpisodeRow { digest: &q.digest, capability_id: &q.capability_id, body: &q.body },
            })
            .collect();
        let results = experiments.record_batch(&writes, episodes);
        drop(writes);
        for (queued, result) in batch.into_iter().zip(results) {
            // A call cancelled meanwhile has no one to tell; its writes stand.
            let _ = queued.done.send(result);
        }
    }
}

/// The leader's duty to write the queue, done when it is dropped.
struct Lead<'a> {
    group: &'a GroupCommit,
    experiments: &'a Experiments,
    episodes: &'a dyn EpisodeStore,
}

impl Drop for Lead<'_> {
    fn drop(&mut self) {
        self.group.commit(self.experiments, self.episodes);
    }
}
