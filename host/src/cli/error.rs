//! Why a command failed, typed: the error of the layer that failed (an
//! archive, the store, an install, a registry, an upload, the server), or
//! what the command itself refuses. The envelope's `error_type` and the exit
//! status are read from the variant, never guessed by downcasting; the
//! message is the chain rendered once by [`jacobian::errors::render`].

use jacobian::archive::{ArchiveError, ArchiveErrorKind};
use jacobian::contract::ErrorType;
use jacobian::demo::DemoError;
use jacobian::oci::OciError;
use jacobian::publishers::SignatureRefusal;
use jacobian::registry::InstallError;
use jacobian::runtime::{OpenError, RecheckError, UploadError};
use jacobian::store::postgres::PgOpenError;
use jacobian::store::{SchemaTooNew, StoreError};

use crate::cli::Exit;

/// A command's result.
pub type Result<T, E = CliError> = std::result::Result<T, E>;

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A flag, an argument or an input the command refuses, said in full.
    #[error("{0}")]
    Invalid(String),
    /// What the command names is not there.
    #[error("{0}")]
    NotFound(String),
    /// An input that does not parse (JSON, UTF-8, a digest, TOML), given
    /// its context by [`Context`].
    #[error(transparent)]
    Malformed(Box<dyn std::error::Error + Send + Sync>),
    /// Reading or writing a file, or another operating-system call.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The runtime or its store could not be opened.
    #[error("opening the runtime: {0}")]
    Unavailable(String),
    /// An archive command's error.
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    /// The store answered with an error.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The store's schema is newer than this build.
    #[error(transparent)]
    SchemaTooNew(#[from] SchemaTooNew),
    /// The shared PostgreSQL store could not be opened.
    #[error(transparent)]
    Postgres(#[from] PgOpenError),
    /// The runtime could not open or change what it keeps (the policy).
    #[error(transparent)]
    Runtime(#[from] jacobian::runtime::OpenError),
    /// Re-checking stored verdicts stopped (the store, an episode's call).
    #[error(transparent)]
    Recheck(#[from] jacobian::runtime::RecheckError),
    /// The HTTP server could not listen, or its runtime could not start.
    #[error("serving")]
    Serve(#[source] std::io::Error),
    /// A bundle could not be installed.
    #[error(transparent)]
    Install(#[from] InstallError),
    /// An OCI registry refused, or its bytes were not what they claimed.
    #[error(transparent)]
    Oci(#[from] OciError),
    /// An artifact upload was refused.
    #[error(transparent)]
    Upload(#[from] UploadError),
    /// Authentication could not be set up (`serve --http`).
    #[error(transparent)]
    Auth(#[from] jacobian::auth::SetupError),
    /// The stdio server stopped with an error.
    #[error(transparent)]
    Stdio(#[from] jacobian::mcp::StdioError),
    /// The demo's walk did not go as written.
    #[error(transparent)]
    Demo(#[from] jacobian::demo::DemoError),
    /// Any of the above, with what the command was doing when it failed.
    #[error("{what}")]
    Context {
        what: String,
        #[source]
        source: Box<CliError>,
    },
}

/// Inputs that do not parse are the caller's to fix: a validation error.
macro_rules! malformed {
    ($($error:ty),* $(,)?) => {$(
        impl From<$error> for CliError {
            fn from(error: $error) -> Self {
                CliError::Malformed(Box::new(error))
            }
        }
    )*};
}

malformed!(serde_json::Error, std::string::FromUtf8Error, jacobian::digest::DigestError, jacobian::policy::PolicyError,);

impl CliError {
    /// The envelope's `error_type`: the failing layer's own classification.
    pub fn error_type(&self) -> ErrorType {
        match self {
            CliError::Invalid(_)
            | CliError::Malformed(_)
            | CliError::Demo(DemoError::Missing { .. } | DemoError::Json(_)) => ErrorType::ValidationError,
            CliError::Recheck(RecheckError::Store(_)) => ErrorType::Unavailable,
            CliError::Recheck(RecheckError::Unreadable { .. } | RecheckError::NoVerdict { .. }) => {
                ErrorType::ValidationError
            }
            CliError::NotFound(_) => ErrorType::NotFound,
            CliError::Io(e) if e.kind() == std::io::ErrorKind::NotFound => ErrorType::NotFound,
            CliError::Io(_) => ErrorType::ValidationError,
            CliError::Stdio(jacobian::mcp::StdioError::Input(jacobian::limits::CopyError::TooLarge(_))) => {
                ErrorType::PayloadTooLarge
            }
            CliError::Unavailable(_) | CliError::Stdio(_) | CliError::Serve(_) => ErrorType::Unavailable,
            CliError::Archive(e) => match e.kind {
                ArchiveErrorKind::Invalid => ErrorType::ArchiveInvalid,
                ArchiveErrorKind::NotFound => ErrorType::NotFound,
                ArchiveErrorKind::Unavailable => ErrorType::Unavailable,
                ArchiveErrorKind::TooLarge => ErrorType::PayloadTooLarge,
            },
            CliError::Store(e) => store_type(e),
            CliError::SchemaTooNew(_) => ErrorType::SchemaTooNew,
            CliError::Postgres(e) => postgres_type(e),
            CliError::Runtime(e) | CliError::Demo(DemoError::Policy(e)) => runtime_type(e),
            CliError::Install(e) => match e {
                InstallError::DigestMismatch { .. } => ErrorType::DigestMismatch,
                InstallError::Signature { refusal: SignatureRefusal::Required, .. } => ErrorType::SignatureRequired,
                InstallError::Signature { refusal: SignatureRefusal::Invalid(_), .. } => ErrorType::SignatureInvalid,
                InstallError::Signature { refusal: SignatureRefusal::Untrusted { .. }, .. } => {
                    ErrorType::UntrustedPublisher
                }
                InstallError::Store(_) => ErrorType::Unavailable,
                _ => ErrorType::ValidationError,
            },
            CliError::Oci(e) => match e {
                OciError::DigestMismatch { .. } => ErrorType::DigestMismatch,
                OciError::Refused { status: 404, .. } => ErrorType::NotFound,
                OciError::Refused { status: 401 | 403, .. } => ErrorType::Unauthorized,
                OciError::Unreachable { .. } | OciError::Refused { .. } => ErrorType::Unavailable,
                _ => ErrorType::ValidationError,
            },
            CliError::Upload(e) => match e {
                UploadError::TooLarge { .. } => ErrorType::PayloadTooLarge,
                UploadError::Mismatch { .. } => ErrorType::DigestMismatch,
                UploadError::Store(_) => ErrorType::Unavailable,
                UploadError::Quota(_) => ErrorType::QuotaExceeded,
                _ => ErrorType::ValidationError,
            },
            CliError::Auth(e) => match e {
                jacobian::auth::SetupError::Invalid { .. } => ErrorType::ValidationError,
                jacobian::auth::SetupError::Unreachable { .. } => ErrorType::Unavailable,
            },
            CliError::Context { source, .. } => source.error_type(),
        }
    }

    /// The exit status: [`Exit::Refused`] for an archive that is not one,
    /// [`Exit::Error`] for any other error.
    pub fn exit(&self) -> Exit {
        if self.error_type() == ErrorType::ArchiveInvalid { Exit::Refused } else { Exit::Error }
    }
}

fn store_type(error: &StoreError) -> ErrorType {
    match error {
        StoreError::NotFound { .. } => ErrorType::NotFound,
        StoreError::DigestMismatch { .. } => ErrorType::DigestMismatch,
        StoreError::Open { .. } | StoreError::Io { .. } | StoreError::Database { .. } => ErrorType::Unavailable,
    }
}

fn runtime_type(error: &OpenError) -> ErrorType {
    match error {
        OpenError::Store(jacobian::store::OpenError::Files(e)) | OpenError::Objects(e) => store_type(e),
        OpenError::Store(jacobian::store::OpenError::Postgres(e)) => postgres_type(e),
        OpenError::Store(jacobian::store::OpenError::SchemaTooNew(_)) => ErrorType::SchemaTooNew,
        OpenError::Store(jacobian::store::OpenError::Database(_)) | OpenError::Engine(_) => ErrorType::Unavailable,
        OpenError::Policy(_) | OpenError::Bundled { .. } => ErrorType::ValidationError,
    }
}

fn postgres_type(error: &PgOpenError) -> ErrorType {
    match error {
        PgOpenError::InvalidUrl(_) => ErrorType::ValidationError,
        PgOpenError::NewerSchema { .. } => ErrorType::SchemaTooNew,
        PgOpenError::Unreachable { .. } | PgOpenError::Failed { .. } => ErrorType::Unavailable,
    }
}

/// What a command was doing, added to an error as its message (the error
/// stays its source and keeps its type).
pub trait Context<T> {
    /// Say what was being done.
    fn context(self, what: impl Into<String>) -> Result<T>;
    /// Say what was being done, computed only on failure.
    fn with_context<S: Into<String>>(self, what: impl FnOnce() -> S) -> Result<T>;
}

impl<T, E: Into<CliError>> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl Into<String>) -> Result<T> {
        self.map_err(|e| CliError::Context { what: what.into(), source: Box::new(e.into()) })
    }

    fn with_context<S: Into<String>>(self, what: impl FnOnce() -> S) -> Result<T> {
        self.map_err(|e| CliError::Context { what: what().into(), source: Box::new(e.into()) })
    }
}

/// A missing value is the caller's mistake, said by the context.
impl<T> Context<T> for Option<T> {
    fn context(self, what: impl Into<String>) -> Result<T> {
        self.ok_or_else(|| CliError::Invalid(what.into()))
    }

    fn with_context<S: Into<String>>(self, what: impl FnOnce() -> S) -> Result<T> {
        self.ok_or_else(|| CliError::Invalid(what().into()))
    }
}

/// Refuse the command: return [`CliError::Invalid`] with the message.
macro_rules! refuse {
    ($($message:tt)*) => {
        return Err($crate::cli::error::CliError::Invalid(format!($($message)*)))
    };
}
pub(crate) use refuse;

#[cfg(test)]
mod tests {
    use super::*;

    fn not_found() -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory")
    }

    #[test]
    fn context_is_said_once_and_keeps_the_type_of_what_failed() {
        let error = Err::<(), _>(not_found()).context("reading /x.json").unwrap_err();
        assert_eq!(error.error_type(), ErrorType::NotFound);
        assert_eq!(jacobian::errors::render(&error), "reading /x.json: No such file or directory");
        let twice = Err::<(), _>(error).context("the policy file").unwrap_err();
        assert_eq!(twice.error_type(), ErrorType::NotFound);
        assert_eq!(jacobian::errors::render(&twice), "the policy file: reading /x.json: No such file or directory");
    }

    #[test]
    fn each_layer_names_its_error_type_and_only_an_invalid_archive_exits_refused() {
        let invalid =
            ArchiveError { kind: ArchiveErrorKind::Invalid, field: "pack_hash".into(), reason: "differs".into() };
        let error = CliError::from(invalid);
        assert_eq!((error.error_type(), error.exit()), (ErrorType::ArchiveInvalid, Exit::Refused));
        let missing = StoreError::NotFound { what: "artifact", digest: jacobian::digest::Digest::of(b"x") };
        let error = CliError::from(missing);
        assert_eq!((error.error_type(), error.exit()), (ErrorType::NotFound, Exit::Error));
        let json = serde_json::from_str::<serde_json::Value>("{").unwrap_err();
        assert_eq!(CliError::from(json).error_type(), ErrorType::ValidationError);
        let store_down = StoreError::Io { what: "reading".into(), source: std::io::Error::other("disk") };
        let policy_change = CliError::from(OpenError::Objects(store_down));
        assert_eq!(policy_change.error_type(), ErrorType::Unavailable, "a store failure, whatever layer carries it");
        let demo = CliError::from(DemoError::Policy(OpenError::Engine("busy".into())));
        assert_eq!(demo.error_type(), ErrorType::Unavailable);
        let no_verdict = RecheckError::NoVerdict { episode: jacobian::digest::Digest::of(b"e"), reason: "fuel".into() };
        assert_eq!(CliError::from(no_verdict).error_type(), ErrorType::ValidationError);
        let over = jacobian::limits::MessageTooLarge { bytes: 5, limit: 4 };
        let stdio = jacobian::mcp::StdioError::Input(over.into());
        let stdio = Err::<(), _>(CliError::from(stdio)).context("serving on stdio").unwrap_err();
        assert_eq!(stdio.error_type(), ErrorType::PayloadTooLarge, "through a context");
        let none = None::<u8>.with_context(|| "--arg k: expected key=value").unwrap_err();
        assert_eq!(
            (none.error_type(), none.to_string().as_str()),
            (ErrorType::ValidationError, "--arg k: expected key=value")
        );
    }
}
