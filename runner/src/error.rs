//! The runner's one error type: what stopped a command, said in a sentence that names
//! the file, field, run or address at fault. A cause is the error's `source()`, never
//! repeated in its message; the command line prints the chain (`rexbench: what: why`).

use std::io;
use std::path::PathBuf;

use benchmark::confined::Refused;

use crate::task::TaskError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or folder of the runner's own could not be read or written.
    #[error("{}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// A file someone else filled was not read: a link out of its folder, a FIFO, a
    /// device, a file over a bundle artifact's size. The run is named where there is one.
    #[error("{}{refused}", run.as_ref().map(|r| format!("run {r}: ")).unwrap_or_default())]
    Refused { run: Option<String>, refused: Refused },
    /// A file that is not as it must be (an outputs folder's layout, a file of a Harbor
    /// job, a line of Slurm's journal), and what is wrong with it.
    #[error("{}: {detail}", path.display())]
    Invalid { path: PathBuf, detail: String },
    /// A task card or the gold beside it.
    #[error(transparent)]
    Task(#[from] TaskError),
    /// What the command was asked cannot be done as asked, and how to ask instead.
    #[error("{0}")]
    Setup(String),
    /// Slurm refused or failed what the runner asked of it.
    #[error("--executor slurm: {0}")]
    Slurm(String),
    /// A program the runner runs could not be started.
    #[error("cannot run {program}")]
    Run {
        program: String,
        #[source]
        source: io::Error,
    },
    /// Ctrl-C: what finished is kept.
    #[error("interrupted: {done} runs finished, {left} left; run the same command again to resume")]
    Interrupted { done: usize, left: usize },
    #[error("cannot read key file {}", path.display())]
    KeyRead {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{}", path.display())]
    KeyParse {
        path: PathBuf,
        #[source]
        source: bundle::KeyError,
    },
    #[error("{} already exists; pass --force to replace it", .0.display())]
    Exists(PathBuf),
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot open {}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot reach {url}")]
    Reach {
        url: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A server could not be reached, or answered with an error.
    #[error("{url}: {reason}")]
    Fetch { url: String, reason: String },
    /// A server answered something that is not what its API describes.
    #[error("{url}: not the answer the API describes: {reason}")]
    Answer { url: String, reason: String },
    #[error("agent `{0}` has no current submission")]
    NoCurrent(String),
}

impl From<Refused> for Error {
    fn from(refused: Refused) -> Self {
        Error::Refused { run: None, refused }
    }
}

impl Error {
    /// An I/O error at `path`, for `map_err`.
    pub(crate) fn io_at(path: &std::path::Path) -> impl FnOnce(io::Error) -> Error + use<> {
        let path = path.to_owned();
        move |source| Error::Io { path, source }
    }
}
