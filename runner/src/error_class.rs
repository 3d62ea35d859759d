//! How a failed run's error is named (the categories of the paper's Tables 9 and 10),
//! and which of those names a maintainers' re-run may state in public.

/// Names a failed run's error from its output: the exception type of the last Python
/// traceback, else a shell error the paper counts (`No such file or directory` is
/// `cannot access`, …), else `None`.
pub fn classify_error(stderr: &str, stdout: &str) -> Option<String> {
    [stderr, stdout].into_iter().find_map(|text| python_exception(text).or_else(|| shell_error(text)))
}

/// The exception type on the line that ends the last traceback in `text`.
fn python_exception(text: &str) -> Option<String> {
    let start = text.rfind("Traceback (most recent call last):")?;
    let tail = &text[start..];
    // The exception line is the first line after the frames that is not indented.
    tail.lines().skip(1).find(|l| !l.starts_with(' ') && !l.trim().is_empty()).and_then(|line| {
        let name = line.split(':').next().unwrap_or(line).trim();
        let name = name.rsplit('.').next().unwrap_or(name);
        let valid = !name.is_empty()
            && name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        valid.then(|| name.to_owned())
    })
}

/// Shell-level failures as the paper's "Bash Errors" rows name them: what a line says,
/// and its name.
const SHELL_ERRORS: [(&str, &str); 6] = [
    ("cannot create directory", "cannot create directory"),
    ("Permission denied", "Permission denied"),
    ("syntax error", "syntax error"),
    ("cannot access", "cannot access"),
    ("unable to write file", "unable to write file"),
    ("No such file or directory", "cannot access"),
];

/// Whether `name` is one of the shell-level failures' names.
pub(crate) fn is_shell_error(name: &str) -> bool {
    SHELL_ERRORS.iter().any(|(_, n)| *n == name)
}

fn shell_error(text: &str) -> Option<String> {
    text.lines().rev().find_map(|line| {
        SHELL_ERRORS.iter().find(|(needle, _)| line.contains(needle)).map(|(_, name)| (*name).to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_errors_are_named_by_the_last_traceback() {
        let stderr = "Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n    x()\nKeyError: 'k'\n\
                      During handling...\nTraceback (most recent call last):\n  File \"b.py\", line 2\n    y\n\
                      torch.cuda.OutOfMemoryError: CUDA out of memory\n";
        assert_eq!(classify_error(stderr, ""), Some("OutOfMemoryError".into()));
        assert_eq!(
            classify_error("Traceback (most recent call last):\n  File \"x\"\nValueError: bad\n", ""),
            Some("ValueError".into())
        );
        assert_eq!(
            classify_error(
                "",
                "Traceback (most recent call last):\n  File \"x\"\nFileNotFoundError: [Errno 2]\n"
            ),
            Some("FileNotFoundError".into())
        );
        assert_eq!(
            classify_error("Traceback (most recent call last):\n  File \"x\"\nKeyboardInterrupt\n", ""),
            Some("KeyboardInterrupt".into())
        );
    }

    #[test]
    fn shell_errors() {
        assert_eq!(
            classify_error("run.sh: line 3: cd: data: No such file or directory\n", ""),
            Some("cannot access".into())
        );
        assert_eq!(
            classify_error("mkdir: cannot create directory '/x': Permission denied\n", ""),
            Some("cannot create directory".into())
        );
        assert_eq!(
            classify_error("run.sh: line 9: syntax error near unexpected token\n", ""),
            Some("syntax error".into())
        );
        assert_eq!(classify_error("all good\n", "still good\n"), None);
    }
}

/// The error types a maintainers' re-run may state in its public envelope: those the
/// runner itself names (its own failures, the shell errors above, the paper's error
/// categories and Python's built-in exceptions). Any other word a re-run's output
/// chose (a patch can print a traceback ending in any name) is
/// [`UNCLASSIFIED_ERROR`]: what a re-run says in public is the maintainers' word, and its
/// free text stays in its private logs.
/// The error type of a run whose held-out re-run ended `infra_error` (spec §4d, §4l).
pub const HELDOUT_FAILED: &str = "held-out re-run failed";

const ERROR_CLASSES: &[&str] = &[
    // The runner's own.
    "empty patch",
    "patch failed",
    "executor failed",
    "codebase copy failed",
    HELDOUT_FAILED,
    "Execution Timeout",
    // The paper's categories (Tables 9 and 10) that are not Python's.
    "empty or missing",
    "OutOfMemory",
    "ArgumentError",
    "ConstructorError",
    "DatasetNotFoundError",
    "HFValidationError",
    "JSONDecodeError",
    "NotFoundError",
    "ParserError",
    "ScannerError",
    "OutOfMemoryError",
    "CalledProcessError",
    // Python's built-in exceptions.
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "BlockingIOError",
    "BrokenPipeError",
    "BufferError",
    "ChildProcessError",
    "ConnectionAbortedError",
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "EOFError",
    "Exception",
    "FileExistsError",
    "FileNotFoundError",
    "FloatingPointError",
    "ImportError",
    "IndentationError",
    "IndexError",
    "InterruptedError",
    "IsADirectoryError",
    "KeyError",
    "KeyboardInterrupt",
    "LookupError",
    "MemoryError",
    "ModuleNotFoundError",
    "NameError",
    "NotADirectoryError",
    "NotImplementedError",
    "OSError",
    "OverflowError",
    "PermissionError",
    "ProcessLookupError",
    "RecursionError",
    "ReferenceError",
    "RuntimeError",
    "StopIteration",
    "SyntaxError",
    "SystemError",
    "SystemExit",
    "TabError",
    "TimeoutError",
    "TypeError",
    "UnboundLocalError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "UnicodeError",
    "ValueError",
    "ZeroDivisionError",
];

/// A re-run's error type outside [`ERROR_CLASSES`], as its public envelope states it.
pub const UNCLASSIFIED_ERROR: &str = "unclassified error";

/// `error_type` as a maintainers' re-run may state it in public: itself where it is one
/// of the runner's closed list (a limit's `resource_limit: …` among them), else
/// [`UNCLASSIFIED_ERROR`].
pub fn public_error_class(error_type: &str) -> &str {
    let limit = crate::sandbox::limits::Resource::ALL.iter().any(|r| r.error_type() == error_type);
    if limit || is_shell_error(error_type) || ERROR_CLASSES.contains(&error_type) {
        error_type
    } else {
        UNCLASSIFIED_ERROR
    }
}

#[cfg(test)]
mod classes {
    use super::*;

    #[test]
    fn a_re_run_states_only_the_runners_own_error_classes() {
        for known in
            ["ValueError", "cannot access", "Execution Timeout", "resource_limit: memory", "patch failed"]
        {
            assert_eq!(public_error_class(known), known);
        }
        // A patch's chosen words: a token, or a name shaped like an exception.
        for chosen in ["RxsAbc123Token", "AdminTokenIsS3cret", "resource_limit: everything", "valueerror", ""]
        {
            assert_eq!(public_error_class(chosen), UNCLASSIFIED_ERROR, "{chosen}");
        }
        // The paper's own categories are all in the list.
        for paper in ["OutOfMemory", "ScannerError", "empty or missing", "HFValidationError"] {
            assert_eq!(public_error_class(paper), paper);
        }
    }
}
