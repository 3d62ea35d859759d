//! What the store answers with: plain data for the pages and the API, without the
//! database (so the app can name these types in a build without one), by resource.

mod agents;
mod changes;
mod failures;
mod findings;
mod key_requests;
mod keys;
mod leaderboard;
mod parity;
mod rates;
mod reproductions;
mod runs;
mod submissions;
mod tasks;

pub use agents::*;
pub use changes::*;
pub use failures::*;
pub use findings::*;
pub use key_requests::*;
pub use keys::*;
pub use leaderboard::*;
pub use parity::*;
pub use rates::*;
pub use reproductions::*;
pub use runs::*;
pub use submissions::*;
pub use tasks::*;
