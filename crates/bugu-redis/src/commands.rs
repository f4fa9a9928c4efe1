//! The `CF.*` command handlers: open the key, check its type, call the value, reply, replicate.
//!
//! Replies follow RedisBloom's: integers in RESP2, booleans in RESP3 where it sends them, and
//! `CF.INFO` as a map (a flat array in RESP2). Every write that succeeds (or creates its key) is
//! replicated verbatim: bugu's inserts are a pure function of the filter and the item, so a
//! replica that applies the same commands holds the same bytes.

use std::ffi::{CString, c_int, c_long};

use redis_module::{Context, ContextFlags, RedisError, RedisResult, RedisString, RedisValue, raw};

use crate::args::{self, ArgError};
use crate::error::CfError;
use crate::key::OpenKey;
use crate::settings::Settings;
use crate::stored::{self, KeyValue, NewValue};
use crate::value::dump::DumpStep;
use crate::value::{CfValue, Info};

impl From<CfError> for RedisError {
    fn from(error: CfError) -> Self {
        RedisError::Str(error.message())
    }
}

impl From<ArgError> for RedisError {
    fn from(error: ArgError) -> Self {
        match error {
            ArgError::WrongArity => RedisError::WrongArity,
            ArgError::Invalid(error) => error.into(),
        }
    }
}

/// The arguments as bytes, after checking that there are at least `min` (the command's name
/// included).
fn arguments(args: &[RedisString], min: usize) -> Result<Vec<&[u8]>, RedisError> {
    if args.len() < min {
        return Err(RedisError::WrongArity);
    }
    Ok(args.iter().map(RedisString::as_slice).collect())
}

/// Exactly `count` arguments (the command's name included), as bytes.
fn exactly<const N: usize>(args: &[RedisString]) -> Result<[&[u8]; N], RedisError> {
    let args: &[RedisString; N] = args.try_into().map_err(|_| RedisError::WrongArity)?;
    Ok(args.each_ref().map(RedisString::as_slice))
}

/// The value under a key opened for writing, a bugu filter created with `settings` if the key is
/// empty; whether it was created.
fn value_or_create(key: &OpenKey, settings: Settings) -> Result<(KeyValue<'_>, bool), RedisError> {
    if let Some(value) = key.value()? {
        return Ok((value, false));
    }
    key.set_value(NewValue::Bugu(CfValue::reserve(settings)?))?;
    Ok((key.value()?.ok_or(CfError::NotFound)?, true))
}

fn resp3(ctx: &Context) -> bool {
    ctx.get_flags().contains(ContextFlags::FLAGS_RESP3)
}

/// `CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e] [ERRORRATE p]`.
pub(crate) fn reserve(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    let argv = arguments(&args, 3)?;
    let settings = args::reserve(&argv[2..])?;
    let key = OpenKey::open(ctx, args[1].inner, true);
    if key.value()?.is_some() {
        return Err(CfError::Exists.into());
    }
    key.set_value(NewValue::Bugu(CfValue::reserve(settings)?))?;
    ctx.replicate_verbatim();
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// `CF.ADD key item`: 1 (RESP3: true), or an error.
pub(crate) fn add(ctx: &Context, key: *mut raw::RedisModuleString, item: &[u8]) -> RedisResult {
    add_one(ctx, key, item, false)
}

/// `CF.ADDNX key item`: 1 if added, 0 if it may be present (RESP3: booleans).
pub(crate) fn add_nx(ctx: &Context, key: *mut raw::RedisModuleString, item: &[u8]) -> RedisResult {
    add_one(ctx, key, item, true)
}

fn add_one(ctx: &Context, key: *mut raw::RedisModuleString, item: &[u8], unique: bool) -> RedisResult {
    let key = OpenKey::open(ctx, key, true);
    let (mut value, created) = value_or_create(&key, Settings::default())?;
    let added = value.ready_mut().and_then(|filter| {
        filter.check_writable()?;
        if unique { filter.add_unique(item) } else { filter.add(item).map(|()| true) }
    });
    if created || added.is_ok() {
        ctx.replicate_verbatim();
    }
    Ok(RedisValue::Bool(added?))
}

/// `CF.INSERT key [CAPACITY c] [NOCREATE] ITEMS item...`: per item 1 or -1 (RESP3: true/false).
pub(crate) fn insert(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    insert_many(ctx, args, false)
}

/// `CF.INSERTNX`, same arguments: per item 1 (added), 0 (may be present) or -1 (no room).
pub(crate) fn insert_nx(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    insert_many(ctx, args, true)
}

fn insert_many(ctx: &Context, args: Vec<RedisString>, unique: bool) -> RedisResult {
    let argv = arguments(&args, 4)?;
    let parsed = args::insert(&argv[2..])?;
    let key = OpenKey::open(ctx, args[1].inner, true);
    if parsed.no_create && key.value()?.is_none() {
        return Err(CfError::NotFound.into());
    }
    let (mut value, _) = value_or_create(&key, parsed.settings)?;
    let filter = value.ready_mut()?;
    filter.check_writable()?;
    let booleans = !unique && resp3(ctx);
    let replies = parsed
        .items
        .iter()
        .map(|item| {
            let added = if unique { filter.add_unique(item) } else { filter.add(item).map(|()| true) };
            match added {
                Ok(added) if booleans => RedisValue::Bool(added),
                Err(_) if booleans => RedisValue::Bool(false),
                Ok(added) => RedisValue::Integer(i64::from(added)),
                Err(_) => RedisValue::Integer(-1),
            }
        })
        .collect();
    ctx.replicate_verbatim();
    Ok(RedisValue::Array(replies))
}

/// `CF.EXISTS key item`: 1 if the item may be present, 0 if it is not (RESP3: booleans).
pub(crate) fn exists(ctx: &Context, key: *mut raw::RedisModuleString, item: &[u8]) -> RedisResult {
    let key = OpenKey::open(ctx, key, false);
    Ok(RedisValue::Bool(match key.value()? {
        Some(value) => value.ready()?.contains(item),
        None => false,
    }))
}

/// `CF.MEXISTS key item...`: `CF.EXISTS` for each item (registered directly, see `direct`), all
/// looked up together. The items are read in place.
pub(crate) fn mexists(
    ctx: &Context,
    key: *mut raw::RedisModuleString,
    items: &[*mut raw::RedisModuleString],
) -> RedisResult {
    let key = OpenKey::open(ctx, key, false);
    let value = key.value()?;
    let filter = value.as_ref().map(KeyValue::ready).transpose()?;
    let answers = match filter {
        Some(filter) => {
            filter.contains_each(&mut items.iter().map(|&item| RedisString::string_as_slice(item)))
        }
        None => vec![false; items.len()],
    };
    raw::reply_with_array(ctx.ctx, answers.len() as c_long);
    for found in answers {
        // Redis sends a boolean in RESP3 and the integer 1 or 0 in RESP2.
        raw::reply_with_bool(ctx.ctx, c_int::from(found));
    }
    Ok(RedisValue::NoReply)
}

/// `CF.COUNT key item`: how many copies of the item may be present (an upper bound).
pub(crate) fn count(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    let argv = exactly::<3>(&args)?;
    let key = OpenKey::open(ctx, args[1].inner, false);
    let copies = match key.value()? {
        Some(value) => value.ready()?.count(argv[2]),
        None => 0,
    };
    Ok(RedisValue::Integer(copies as i64))
}

/// `CF.DEL key item`: 1 if one copy was removed, 0 if none was (RESP3: booleans).
pub(crate) fn del(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    let argv = exactly::<3>(&args)?;
    let key = OpenKey::open(ctx, args[1].inner, true);
    let mut value = key.value()?.ok_or(CfError::DelNotFound)?;
    let filter = value.ready_mut()?;
    let removed = filter.delete(argv[2]);
    if removed {
        ctx.replicate_verbatim();
    }
    Ok(RedisValue::Bool(removed))
}

/// `CF.INFO key`: the filter's fields, in RedisBloom's order, then the key's layout.
pub(crate) fn info(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    exactly::<2>(&args)?;
    let key = OpenKey::open(ctx, args[1].inner, false);
    let info = key.value()?.ok_or(CfError::NotFound)?.ready()?.info();
    reply_info(ctx, &info);
    Ok(RedisValue::NoReply)
}

/// Sends `CF.INFO`'s map in its documented order (Redis sends a map to a RESP2 client as a flat
/// array); the crate's map replies would sort or shuffle the fields.
fn reply_info(ctx: &Context, info: &Info) {
    let fields = [
        ("Size", info.size),
        ("Number of buckets", info.buckets),
        ("Number of filters", info.filters),
        ("Number of items inserted", info.inserted),
        ("Number of items deleted", info.deleted),
        ("Bucket size", info.bucket_size),
        ("Expansion rate", info.expansion),
        ("Max iterations", info.max_iterations),
    ];
    raw::reply_with_map(ctx.ctx, fields.len() as c_long + 1);
    for (name, number) in fields {
        let name = CString::new(name).expect("no NUL in the field names");
        raw::reply_with_simple_string(ctx.ctx, name.as_ptr());
        raw::reply_with_long_long(ctx.ctx, number as i64);
    }
    for text in ["Layout", info.layout] {
        let text = CString::new(text).expect("no NUL in the layout names");
        raw::reply_with_simple_string(ctx.ctx, text.as_ptr());
    }
}

/// `CF.SCANDUMP key iterator`: `[next iterator, chunk]`, then `[0, nil]` at the end.
pub(crate) fn scandump(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    let argv = exactly::<3>(&args)?;
    let iterator = args::integer(argv[2]).ok_or(CfError::InvalidPosition)?;
    let key = OpenKey::open(ctx, args[1].inner, false);
    let step = key.value()?.ok_or(CfError::NotFound)?.ready()?.dump_step(iterator)?;
    Ok(match step {
        DumpStep::Chunk { next, data } => {
            RedisValue::Array(vec![RedisValue::Integer(next), RedisValue::StringBuffer(data)])
        }
        DumpStep::Done => RedisValue::Array(vec![RedisValue::Integer(0), RedisValue::Null]),
    })
}

/// `CF.LOADCHUNK key iterator data`: one chunk of a `CF.SCANDUMP`, in order; replicated as sent,
/// so a replica restores the same filter.
pub(crate) fn loadchunk(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    let argv = exactly::<4>(&args)?;
    let iterator = args::integer(argv[2]).ok_or(CfError::InvalidPosition)?;
    let key = OpenKey::open(ctx, args[1].inner, true);
    if let Some(started) = stored::load_chunk(key.value()?, iterator, argv[3])? {
        key.set_value(started)?;
    }
    ctx.replicate_verbatim();
    Ok(RedisValue::SimpleStringStatic("OK"))
}
