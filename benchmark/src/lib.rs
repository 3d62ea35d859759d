//! The RExBench benchmark as data, shared by the runner and the server: the task cards
//! and the checks that judge a run (matching the official evaluators), the task-set
//! digest that says which results rank together, the paper's published results, and
//! the results directory that `pack` turns into a signed bundle. No processes, no
//! network: running experiments is the runner's.

pub mod builtin;
pub mod check;
pub mod confined;
pub mod cost;
pub mod diff;
pub mod heldout;
pub mod integrity;
pub mod marks;
pub mod pack;
pub mod parity;
pub mod published;
pub mod results;
pub mod task;
pub mod taskset;
pub mod tree;
