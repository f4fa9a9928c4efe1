//! The module's load-time arguments (`--loadmodule libbugu_redis.so NAME VALUE ...`), names
//! case-insensitive:
//!
//! - `REDISBLOOM-DATA on|off` (default `on`): serve RedisBloom's cuckoo filters (the data type
//!   `MBbloomCF`, and its dumps through `CF.LOADCHUNK`). `off` leaves that type unregistered, so
//!   that an RDB file holding such keys is refused as Redis refuses any unknown type.

/// What the arguments ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ModuleArgs {
    pub(crate) redisbloom_data: bool,
}

impl Default for ModuleArgs {
    fn default() -> Self {
        Self { redisbloom_data: true }
    }
}

/// The arguments, or the message to log when they are not understood (the module then refuses
/// to load, rather than run with a setting other than the one asked for).
pub(crate) fn parse(args: &[&[u8]]) -> Result<ModuleArgs, String> {
    let mut parsed = ModuleArgs::default();
    let mut rest = args;
    while let [name, tail @ ..] = rest {
        let name = String::from_utf8_lossy(name);
        let [value, tail @ ..] = tail else {
            return Err(format!("bugu: the module argument {name} needs a value"));
        };
        let value = String::from_utf8_lossy(value);
        match name.to_ascii_uppercase().as_str() {
            "REDISBLOOM-DATA" => {
                parsed.redisbloom_data = match value.to_ascii_lowercase().as_str() {
                    "on" | "yes" => true,
                    "off" | "no" => false,
                    _ => return Err(format!("bugu: REDISBLOOM-DATA takes on or off, not {value}")),
                }
            }
            _ => return Err(format!("bugu: unknown module argument {name} (known: REDISBLOOM-DATA on|off)")),
        }
        rest = tail;
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_read_or_refused_with_a_reason() {
        assert_eq!(parse(&[]), Ok(ModuleArgs { redisbloom_data: true }));
        assert_eq!(parse(&[b"redisbloom-data", b"OFF"]), Ok(ModuleArgs { redisbloom_data: false }));
        assert_eq!(parse(&[b"REDISBLOOM-DATA", b"on"]), Ok(ModuleArgs { redisbloom_data: true }));
        for bad in [&[&b"REDISBLOOM-DATA"[..]][..], &[b"REDISBLOOM-DATA", b"maybe"], &[b"TAKEOVER", b"on"]] {
            let message = parse(bad).unwrap_err();
            assert!(message.starts_with("bugu: "), "{message}");
        }
    }
}
