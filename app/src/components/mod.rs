//! The pieces pages share, beneath them: a page's frame (its address, status, loading
//! and error page), badges, tables, charts' figures and notes. Components import from
//! `data`, `error` and `views`, never from `pages` or `islands`.

mod badges;
mod chart;
mod failures;
mod intervals;
mod issues;
mod page;
mod submitter;

pub(crate) use badges::{AgentUrl, HarnessBadge, OutcomeLabel, ProvenanceBadge, Rate, TierBadge};
pub(crate) use chart::Chart;
pub(crate) use failures::{FailureRow, FailureTable, FlaggedRuns};
pub(crate) use intervals::{IntervalNote, interval_text, points_interval};
pub(crate) use issues::{IssueMark, KnownIssues};
pub(crate) use page::{ErrorPage, loaded, param, query, query_all, set_status};
pub(crate) use submitter::SubmittedBy;
