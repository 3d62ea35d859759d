//! What the RExBench paper publishes beyond the per-task results the published bundles
//! carry, as the pages show it (labelled as published, beside what the bundles give):
//! Table 7, Tables 9–10 and the known inconsistencies. Read once, in `vocab::paper`, the
//! one reader of the project's copy of the paper's numbers (which `import-published`
//! reads too).

pub use vocab::paper::*;
