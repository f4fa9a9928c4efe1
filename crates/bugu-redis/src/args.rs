//! Parsing of the commands' arguments, as RedisBloom documents them: options by name in any order
//! (a later one wins), names in any case.

use crate::error::CfError;
use crate::settings::{Settings, SettingsError};

/// Why a command's arguments were refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArgError {
    /// Too few arguments, or an option without its value.
    WrongArity,
    /// An argument the command refuses, with the reply to send.
    Invalid(CfError),
}

impl<E: Into<CfError>> From<E> for ArgError {
    fn from(error: E) -> Self {
        Self::Invalid(error.into())
    }
}

/// `CF.INSERT` / `CF.INSERTNX` arguments after the key.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct InsertArgs<'a> {
    /// The settings of a filter the command creates (`CAPACITY`, else the defaults).
    pub(crate) settings: Settings,
    pub(crate) no_create: bool,
    pub(crate) items: &'a [&'a [u8]],
}

/// An integer argument, as Redis writes them (decimal, optional sign, no spaces).
pub(crate) fn integer(arg: &[u8]) -> Option<i64> {
    std::str::from_utf8(arg).ok()?.parse().ok()
}

fn number(arg: &[u8]) -> Option<f64> {
    std::str::from_utf8(arg).ok()?.parse().ok()
}

/// `CF.RESERVE` arguments after the key: `capacity [BUCKETSIZE b] [MAXITERATIONS m]
/// [EXPANSION e] [ERRORRATE p]`.
pub(crate) fn reserve(args: &[&[u8]]) -> Result<Settings, ArgError> {
    let (capacity, mut options) = args.split_first().ok_or(ArgError::WrongArity)?;
    let mut settings =
        Settings::default().with_capacity(integer(capacity).ok_or(SettingsError::Capacity)?)?;
    let mut given = Vec::new();
    while let Some((name, rest)) = options.split_first() {
        let name = name.to_ascii_uppercase();
        // Each option parses its value and checks its range; a value that is not a number is
        // out of range.
        let set: fn(Settings, &[u8]) -> Result<Settings, SettingsError> = match name.as_slice() {
            b"BUCKETSIZE" => |s, v| s.with_bucket_size(integer(v).ok_or(SettingsError::BucketSize)?),
            b"MAXITERATIONS" => |s, v| s.with_max_iterations(integer(v).ok_or(SettingsError::MaxIterations)?),
            b"EXPANSION" => |s, v| s.with_expansion(integer(v).ok_or(SettingsError::Expansion)?),
            b"ERRORRATE" => |s, v| s.with_error_rate(number(v).ok_or(SettingsError::ErrorRate)?),
            b"GROWTH" => Settings::with_growth,
            _ => return Err(CfError::UnknownArgument.into()),
        };
        let (value, rest) = rest.split_first().ok_or(ArgError::WrongArity)?;
        settings = set(settings, value)?;
        given.push(name);
        options = rest;
    }
    // Checked once all are known: whether an option applies depends on `GROWTH`, in any order.
    Ok(settings.checked(|option| given.iter().any(|name| name == option))?)
}

/// `CF.INSERT` / `CF.INSERTNX` arguments after the key: `[CAPACITY c] [GROWTH g] [NOCREATE] ITEMS
/// item...`.
pub(crate) fn insert<'a>(args: &'a [&'a [u8]]) -> Result<InsertArgs<'a>, ArgError> {
    let mut parsed = InsertArgs { settings: Settings::default(), no_create: false, items: &[] };
    let mut rest = args;
    while let Some((name, after)) = rest.split_first() {
        match name.to_ascii_uppercase().as_slice() {
            b"CAPACITY" => {
                let (value, after) = after.split_first().ok_or(ArgError::WrongArity)?;
                parsed.settings =
                    parsed.settings.with_capacity(integer(value).ok_or(SettingsError::Capacity)?)?;
                rest = after;
            }
            b"GROWTH" => {
                let (value, after) = after.split_first().ok_or(ArgError::WrongArity)?;
                parsed.settings = parsed.settings.with_growth(value)?.checked(|_| false)?;
                rest = after;
            }
            b"NOCREATE" => {
                parsed.no_create = true;
                rest = after;
            }
            b"ITEMS" if !after.is_empty() => return Ok(InsertArgs { items: after, ..parsed }),
            b"ITEMS" => return Err(ArgError::WrongArity),
            _ => return Err(CfError::UnknownArgument.into()),
        }
    }
    Err(ArgError::WrongArity)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<&[u8]> {
        line.split_whitespace().map(str::as_bytes).collect()
    }

    fn invalid(error: SettingsError) -> ArgError {
        ArgError::Invalid(CfError::Settings(error))
    }

    #[test]
    fn reserve_options_in_any_order_and_case() {
        let settings =
            reserve(&words("1000 expansion 3 BUCKETSIZE 4 MaxIterations 7 ERRORRATE 0.001")).unwrap();
        assert_eq!(
            (
                settings.capacity,
                settings.bucket_size,
                settings.max_iterations,
                settings.expansion,
                settings.error_rate
            ),
            (1000, 4, 7, 4, 0.001)
        );
        assert_eq!(reserve(&words("10 EXPANSION 2 EXPANSION 0")).unwrap().expansion, 0);
        assert_eq!(reserve(&words("10")).unwrap(), Settings::default().with_capacity(10).unwrap());
    }

    #[test]
    fn reserve_errors() {
        assert_eq!(reserve(&[]), Err(ArgError::WrongArity));
        for capacity in ["abc", "0", "-1", "1073741825", "1.5", "99999999999999999999"] {
            assert_eq!(reserve(&words(capacity)), Err(invalid(SettingsError::Capacity)), "{capacity}");
        }
        assert_eq!(reserve(&words("10 BUCKETSIZE")), Err(ArgError::WrongArity));
        assert_eq!(reserve(&words("10 COLOUR 3")), Err(ArgError::Invalid(CfError::UnknownArgument)));
        for (option, error) in [
            ("BUCKETSIZE 0", SettingsError::BucketSize),
            ("BUCKETSIZE x", SettingsError::BucketSize),
            ("MAXITERATIONS 65536", SettingsError::MaxIterations),
            ("MAXITERATIONS -3", SettingsError::MaxIterations),
            ("EXPANSION 32769", SettingsError::Expansion),
            ("EXPANSION two", SettingsError::Expansion),
            ("ERRORRATE 1", SettingsError::ErrorRate),
            ("ERRORRATE 0", SettingsError::ErrorRate),
            ("ERRORRATE nan", SettingsError::ErrorRate),
            ("ERRORRATE often", SettingsError::ErrorRate),
        ] {
            assert_eq!(reserve(&words(&format!("10 {option}"))), Err(invalid(error)), "{option}");
        }
    }

    #[test]
    fn insert_arguments() {
        let args = words("CAPACITY 50 nocreate ITEMS a b");
        let parsed = insert(&args).unwrap();
        assert_eq!((parsed.settings.capacity, parsed.no_create, parsed.items), (50, true, &words("a b")[..]));
        // Everything after ITEMS is an item, option names included.
        let args = words("ITEMS NOCREATE ITEMS");
        assert_eq!(insert(&args).unwrap().items, &words("NOCREATE ITEMS")[..]);
        let defaults = words("ITEMS x");
        assert_eq!(insert(&defaults).unwrap().settings, Settings::default());

        for wrong_arity in ["", "ITEMS", "CAPACITY", "NOCREATE", "CAPACITY 10"] {
            assert_eq!(insert(&words(wrong_arity)), Err(ArgError::WrongArity), "{wrong_arity}");
        }
        assert_eq!(insert(&words("CAPACITY -5 ITEMS a")), Err(invalid(SettingsError::Capacity)));
        assert_eq!(insert(&words("FAST ITEMS a")), Err(ArgError::Invalid(CfError::UnknownArgument)));
    }

    #[test]
    fn integers_as_redis_writes_them() {
        assert_eq!(integer(b"-12"), Some(-12));
        assert_eq!(integer(b"+7"), Some(7));
        for bad in [&b""[..], b" 1", b"1 ", b"0x10", b"\xff"] {
            assert_eq!(integer(bad), None);
        }
    }
}
