//! One page per file (and the run page's parts: its experiment, outputs and
//! reproduction); the pieces pages share are `crate::components`.

mod about;
mod agent;
mod changes;
mod compare;
mod desk;
mod experiment;
mod failures;
mod key_request;
mod keys;
mod leaderboard;
mod login;
mod not_found;
mod outputs;
mod parity;
mod reproduction;
mod run;
mod signin;
mod submit;
mod task;
mod tasks;

pub(crate) use about::AboutPage;
pub(crate) use agent::AgentPage;
pub(crate) use changes::ChangesPage;
pub(crate) use compare::ComparePage;
pub(crate) use desk::DeskPage;
pub(crate) use failures::FailuresPage;
pub(crate) use key_request::KeyRequestPage;
pub(crate) use keys::KeysPage;
pub(crate) use leaderboard::LeaderboardPage;
pub(crate) use login::SignInLinkPage;
pub(crate) use not_found::NotFound;
pub(crate) use parity::ParityPage;
pub(crate) use run::RunPage;
pub(crate) use signin::SignInPage;
pub use submit::{SubmitPage, Verdict};
pub(crate) use task::TaskPage;
pub(crate) use tasks::TasksPage;
