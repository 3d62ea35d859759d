//! The board made ready before anyone asks for it.
//!
//! The leaderboard's reads (its rows, the task sets, and above all the statistics) are
//! kept by the store until the change log moves, and made by the first request after a
//! start or a change: at 10,000 agents that request waited 6–15 s after a start and 1–3 s
//! after a change. Here a background task makes them itself: at the start, and again
//! each time [`crate::cache::follow`] sees the change log move (an ingest by this process
//! or any other sharing the database). A request that comes while they are being made
//! waits for them, as it would for another request making them; one that comes after
//! finds them made. Changes that come while a round runs are taken together by the next.
//! The server says it is ready (`/readyz`) once the start's round has ended.
//!
//! It makes the reads of the two views the header links to: every task (the default),
//! and the public tasks. What a reader may see is decided after these reads, per
//! request, as for any other read: nothing here depends on who reads.

use std::time::Instant;

use tokio::sync::{oneshot, watch};
use views::board::LeaderboardParams;

use crate::state::Shared;

/// Makes the board's reads at the start and after each change `changes` reports. Until
/// the first round ends (well or not), `/readyz` answers 503, so that a load balancer
/// keeps sending readers to the servers already running; `first` is told when it ends
/// (the start's other background work waits for it: both want the cores).
pub(crate) async fn follow(state: Shared, mut changes: watch::Receiver<i64>, first: oneshot::Sender<()>) {
    let mut first = Some(first);
    loop {
        let generation = *changes.borrow_and_update();
        let at = Instant::now();
        // On a task of its own, so that even a panic ends the round (and the start's wait).
        let round = tokio::spawn({
            let state = state.clone();
            async move { board(&state).await }
        });
        match round.await {
            Ok(Ok(())) => {
                state.metrics.made_ready(generation, at.elapsed());
                tracing::info!(
                    generation,
                    seconds = at.elapsed().as_secs_f64(),
                    "the board's reads made ready"
                );
            }
            Ok(Err(e)) => {
                tracing::warn!(error = %crate::error::chain(e), "could not make the board's reads ready")
            }
            Err(e) => tracing::error!(error = %e, "making the board's reads ready failed"),
        }
        if let Some(first) = first.take() {
            state.metrics.set_starting(false);
            let _ = first.send(());
        }
        if changes.changed().await.is_err() {
            return;
        }
    }
}

/// The reads of the leaderboard's two views, made (or found kept) once each.
async fn board(state: &Shared) -> Result<(), views::ViewError> {
    for tasks in [None, Some(views::board::TaskScope::Public)] {
        let params = LeaderboardParams { tasks: tasks.map(|t| t.as_str().to_owned()), ..Default::default() };
        let query = params.view().expect("the leaderboard's own views are valid queries");
        views::leaderboard::page(&state.store, &state.catalog, &query).await?;
    }
    Ok(())
}
