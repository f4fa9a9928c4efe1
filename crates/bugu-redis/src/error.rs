//! Every error a command can reply, with its text as sent. RedisBloom's texts are kept as its
//! clients see them (some without the `ERR` prefix); the texts bugu adds start with `ERR`.

use crate::settings::SettingsError;

/// An error reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CfError {
    /// A setting out of range.
    Settings(SettingsError),
    /// `CF.RESERVE` on a key that exists, or a `CF.LOADCHUNK` header on a filter.
    Exists,
    /// A command that needs the filter on a missing key (`CF.INFO`, `CF.SCANDUMP`, `NOCREATE`).
    NotFound,
    /// `CF.DEL` on a missing key.
    DelNotFound,
    /// An option the command does not know.
    UnknownArgument,
    /// A fixed-size filter (`EXPANSION 0`) with no room.
    Full,
    /// A growing filter that may not add another level.
    MaxExpansions,
    /// The item already fills both of its buckets.
    TooManyCopies,
    /// Growing needed more memory than could be allocated.
    OutOfMemory,
    /// A key whose `CF.LOADCHUNK` restore has not received its last chunk.
    RestoreInProgress,
    /// A `CF.SCANDUMP` / `CF.LOADCHUNK` iterator that does not fit the dump.
    InvalidPosition,
    /// A `CF.SCANDUMP` iterator of a dump that began before the filter's last write.
    DumpOutdated,
    /// A `CF.LOADCHUNK` chunk of another dump than the restore's first chunk.
    OtherDump,
    /// A first `CF.LOADCHUNK` chunk that is not a valid header.
    InvalidHeader,
    /// A `CF.LOADCHUNK` chunk whose bytes are not a valid filter.
    BadChunk,
    /// The key holds another type.
    WrongType,
}

impl CfError {
    /// The reply's text.
    pub(crate) fn message(self) -> &'static str {
        match self {
            Self::Settings(error) => error.message(),
            Self::Exists => "ERR item exists",
            Self::NotFound => "ERR not found",
            Self::DelNotFound => "Not found",
            Self::UnknownArgument => "Unknown argument received",
            Self::Full => "Filter is full",
            Self::MaxExpansions => "Maximum expansions reached",
            Self::TooManyCopies => "ERR too many copies of this item (use CF.ADDNX)",
            Self::OutOfMemory => "ERR out of memory",
            Self::RestoreInProgress => "ERR restore in progress: load the remaining chunks with CF.LOADCHUNK",
            Self::InvalidPosition => "Invalid position",
            Self::DumpOutdated => {
                "ERR the filter changed since this CF.SCANDUMP began: dump it again from iterator 0"
            }
            Self::OtherDump => {
                "ERR this chunk is from another CF.SCANDUMP than the restore's first chunk: restart the restore"
            }
            Self::InvalidHeader => "Invalid header",
            Self::BadChunk => "Couldn't load chunk!",
            Self::WrongType => "WRONGTYPE Operation against a key holding the wrong kind of value",
        }
    }
}

impl From<SettingsError> for CfError {
    fn from(error: SettingsError) -> Self {
        Self::Settings(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_redisblooms_and_fit_one_line() {
        let documented = [
            (CfError::Settings(SettingsError::Capacity), "Bad capacity"),
            (CfError::Exists, "ERR item exists"),
            (CfError::NotFound, "ERR not found"),
            (CfError::DelNotFound, "Not found"),
            (CfError::UnknownArgument, "Unknown argument received"),
            (CfError::Full, "Filter is full"),
            (CfError::MaxExpansions, "Maximum expansions reached"),
            (CfError::InvalidPosition, "Invalid position"),
            (CfError::InvalidHeader, "Invalid header"),
            (CfError::BadChunk, "Couldn't load chunk!"),
            (CfError::WrongType, "WRONGTYPE Operation against a key holding the wrong kind of value"),
        ];
        for (error, text) in documented {
            assert_eq!(error.message(), text);
        }
        // bugu's own errors: RESP needs one line, and ERR names them as errors to clients.
        for error in [
            CfError::TooManyCopies,
            CfError::OutOfMemory,
            CfError::RestoreInProgress,
            CfError::DumpOutdated,
            CfError::OtherDump,
        ] {
            let text = error.message();
            assert!(text.starts_with("ERR ") && !text.contains(['\r', '\n']), "{text}");
        }
    }
}
