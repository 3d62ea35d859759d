//! Reads of the whole board, made once per change of the data: the leaderboard's rows,
//! the task sets, a task's places and rows, the current agents, the integrity overview
//! and the statistics. Each is a pure function of the database (and of what the
//! server was told at start: the task sets and attempts it knows), never of who reads:
//! what a reader may see is decided after, in `views`, as for any other read.
//!
//! An entry is valid at the change-log position ([`Store::generation`]) read *before*
//! it was made. Every write that changes what these reads return appends to the change
//! log, in the same transaction, so a change made by any server process sharing the
//! database makes the next read here start afresh; an entry made from data newer than
//! its position is at worst made once more. Concurrent readers of one key wait for the
//! one making it; other keys go on.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::{Store, StoreError, db};

/// Entries past this many (of one kind) are dropped when a new one comes: the keys are
/// few (a task, an integrity and a task scope), so this only bounds a caller's mistake.
const MOST_ENTRIES: usize = 64;

type Slot<V> = Arc<tokio::sync::Mutex<Option<(i64, Arc<V>)>>>;

#[derive(Debug)]
pub(crate) struct Memo<K, V> {
    slots: Mutex<HashMap<K, Slot<V>>>,
    /// Values made (not kept) since the store opened.
    made: AtomicU64,
}

impl<K, V> Default for Memo<K, V> {
    fn default() -> Self {
        Memo { slots: Mutex::new(HashMap::new()), made: AtomicU64::new(0) }
    }
}

impl<K: Eq + Hash + Clone, V> Memo<K, V> {
    /// The value of `key` made at `generation`: kept, or made by `make` now.
    pub(crate) async fn get_or<F, Fut>(&self, generation: i64, key: &K, make: F) -> Result<Arc<V>, StoreError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<V, StoreError>>,
    {
        self.get_or_after(generation, key, |_| make()).await
    }

    /// [`Memo::get_or`], `make` given the value kept from an earlier generation, if any
    /// (for what of it a change leaves as it was).
    pub(crate) async fn get_or_after<F, Fut>(
        &self,
        generation: i64,
        key: &K,
        make: F,
    ) -> Result<Arc<V>, StoreError>
    where
        F: FnOnce(Option<Arc<V>>) -> Fut,
        Fut: Future<Output = Result<V, StoreError>>,
    {
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
            if !slots.contains_key(key) && slots.len() >= MOST_ENTRIES {
                slots.clear();
            }
            slots.entry(key.clone()).or_default().clone()
        };
        let mut held = slot.lock().await;
        if let Some((at, value)) = held.as_ref()
            && *at == generation
        {
            return Ok(value.clone());
        }
        let value = Arc::new(make(held.as_ref().map(|(_, earlier)| earlier.clone())).await?);
        *held = Some((generation, value.clone()));
        self.made.fetch_add(1, Ordering::Relaxed);
        Ok(value)
    }

    fn made(&self) -> u64 {
        self.made.load(Ordering::Relaxed)
    }

    /// Forgets every entry: what the server knows besides the database changed.
    pub(crate) fn clear(&self) {
        self.slots.lock().unwrap_or_else(PoisonError::into_inner).clear();
    }
}

/// The board's reads kept by [`Memo`], one kind each.
#[derive(Debug, Default)]
pub(crate) struct Memos {
    /// By integrity and the tasks counted (all, if none are named).
    pub(crate) stats: Memo<(vocab::Integrity, Option<Vec<vocab::TaskId>>), crate::analysis::Analysed>,
    /// Every current row of the leaderboard, of every task set, in no order; by the same.
    pub(crate) board: Memo<(vocab::Integrity, Option<Vec<vocab::TaskId>>), Vec<crate::LeaderboardRow>>,
    pub(crate) task_sets: Memo<(), Vec<crate::TaskSetSummary>>,
    /// By task.
    pub(crate) task_places: Memo<String, Vec<crate::TaskPlace>>,
    pub(crate) task_rows: Memo<String, Vec<crate::TaskAgentRow>>,
    pub(crate) current_agents: Memo<(), Vec<(String, String)>>,
    pub(crate) integrity: Memo<(), crate::IntegrityOverview>,
}

impl Memos {
    /// Values made by every kind since the store opened: a read answered from what is
    /// kept leaves it as it was.
    pub(crate) fn made(&self) -> u64 {
        self.stats.made()
            + self.board.made()
            + self.task_sets.made()
            + self.task_places.made()
            + self.task_rows.made()
            + self.current_agents.made()
            + self.integrity.made()
    }

    pub(crate) fn clear(&self) {
        self.stats.clear();
        self.board.clear();
        self.task_sets.clear();
        self.task_places.clear();
        self.task_rows.clear();
        self.current_agents.clear();
        self.integrity.clear();
    }
}

impl Store {
    /// How many reads of the whole board (the leaderboard's rows, the statistics, the
    /// task sets, …) this store has made rather than answered from what it keeps: a
    /// page whose reads were all made ready before it was asked leaves it as it was.
    pub fn board_reads_made(&self) -> u64 {
        self.memo.made()
    }

    /// The newest change's sequence number: moves with every ingest.
    pub async fn generation(&self) -> Result<i64, StoreError> {
        let (generation,) = db::query_as("SELECT CAST(COALESCE(MAX(seq), 0) AS BIGINT) AS g FROM changes")
            .fetch_one(&self.pool)
            .await?;
        Ok(generation)
    }
}
