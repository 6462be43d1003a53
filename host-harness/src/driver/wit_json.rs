//! The one rule between the component's WIT values and the JSON of a
//! scenario, in both directions, from the WIT types alone (no per-function
//! mapping). `tests/conformance/README.md` ("Values") states it for every
//! runner; the Node runner applies the same rule to jco's values.
//!
//! - record: an object keyed by field name, `-` written `_`;
//! - enum: the case name; flags: the list of the flags set;
//! - variant: `{"kind": case, "value": payload}` (`value` null without one);
//! - option: `null` or the value; result: `{"ok": …}` or `{"err": …}`;
//! - list and tuple: an array; integers and floats: numbers (a float that is
//!   not finite: `null`); bool, char and string as themselves.
//!
//! Into the component, a record field that is absent is `none` for an
//! option, empty for a list and `false` for a bool; any other absent or
//! unknown field is an error naming its path. Fields named in `defaults`
//! (the turn context, the dream gates) start from the given object and take
//! the request's fields over it, also when the field is an option and absent.
//!
//! Types are the data of `calls.json` (`describe_type`), so the same code
//! serves the sandbox (wasmtime `Val`s) and the native driver (the serde
//! shapes of the crate's generated bindings).

use anyhow::{anyhow, bail, Context};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use wasmtime::component::{Type, Val};

/// Records a request may leave out or give in part, by field name.
pub type Defaults = BTreeMap<&'static str, Value>;

/// A WIT name as a JSON key: `start-line` → `start_line`.
pub fn json_key(wit_name: &str) -> String {
    wit_name.replace('-', "_")
}

/// A type's kind and what it holds: `"u32"` → (`u32`, None); `{"list": T}`
/// → (`list`, T).
pub fn kind(ty: &Value) -> (&str, &Value) {
    match ty {
        Value::String(name) => (name.as_str(), &Value::Null),
        Value::Object(o) => o
            .iter()
            .next()
            .map_or(("?", &Value::Null), |(k, v)| (k.as_str(), v)),
        _ => ("?", &Value::Null),
    }
}

/// A record's fields or a variant's cases: `(name, type)`.
fn members(list: &Value) -> impl Iterator<Item = (&str, &Value)> {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|m| (m["name"].as_str().unwrap_or_default(), &m["type"]))
}

fn names(list: &Value) -> impl Iterator<Item = &str> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// Whether a value of `ty` holds a record field called `name`.
pub fn has_field(ty: &Value, name: &str) -> bool {
    match kind(ty) {
        ("record", fields) => {
            members(fields).any(|(n, t)| json_key(n) == name || has_field(t, name))
        }
        ("option" | "list", inner) => has_field(inner, name),
        _ => false,
    }
}

// ------------------------------------------------------------ into a call

/// Checks `json` against `ty` and completes it by the rule: every record
/// field present, defaults merged in. `at` names the place in errors.
pub fn complete(ty: &Value, json: &Value, defaults: &Defaults, at: &str) -> anyhow::Result<Value> {
    let wrong = || anyhow!("{at}: expected {}, got {json}", kind(ty).0);
    Ok(match kind(ty) {
        ("bool", _) => Value::Bool(json.as_bool().ok_or_else(wrong)?),
        ("s8", _) => json!(int::<i8>(json, at)?),
        ("u8", _) => json!(int::<u8>(json, at)?),
        ("s16", _) => json!(int::<i16>(json, at)?),
        ("u16", _) => json!(int::<u16>(json, at)?),
        ("s32", _) => json!(int::<i32>(json, at)?),
        ("u32", _) => json!(int::<u32>(json, at)?),
        ("s64", _) => json!(int::<i64>(json, at)?),
        ("u64", _) => json!(int::<u64>(json, at)?),
        ("f32" | "f64", _) => json!(json.as_f64().ok_or_else(wrong)?),
        ("char", _) => {
            let text = json.as_str().ok_or_else(wrong)?;
            if text.chars().count() != 1 {
                return Err(wrong());
            }
            json.clone()
        }
        ("string", _) => Value::String(json.as_str().ok_or_else(wrong)?.to_string()),
        ("list", element) => Value::Array(
            json.as_array()
                .ok_or_else(wrong)?
                .iter()
                .enumerate()
                .map(|(i, item)| complete(element, item, defaults, &format!("{at}[{i}]")))
                .collect::<anyhow::Result<_>>()?,
        ),
        ("tuple", types) => {
            let items = json.as_array().ok_or_else(wrong)?;
            let types = types.as_array().cloned().unwrap_or_default();
            if items.len() != types.len() {
                return Err(wrong());
            }
            Value::Array(
                types
                    .iter()
                    .zip(items)
                    .enumerate()
                    .map(|(i, (t, item))| complete(t, item, defaults, &format!("{at}[{i}]")))
                    .collect::<anyhow::Result<_>>()?,
            )
        }
        ("record", fields) => {
            let object = json.as_object().ok_or_else(wrong)?;
            let fields: Vec<(&str, &Value)> = members(fields).collect();
            Value::Object(complete_fields(&fields, object, defaults, at)?)
        }
        ("variant", cases) => {
            let object = json.as_object().ok_or_else(wrong)?;
            let case = object
                .get("kind")
                .and_then(Value::as_str)
                .ok_or_else(wrong)?;
            let (_, payload_type) = members(cases)
                .find(|(name, _)| *name == case)
                .ok_or_else(|| anyhow!("{at}: no case `{case}`"))?;
            let value = match (payload_type, object.get("value")) {
                (Value::Null, None | Some(Value::Null)) => Value::Null,
                (Value::Null, Some(_)) => bail!("{at}: case `{case}` has no value"),
                (_, None) => bail!("{at}: case `{case}` needs a `value`"),
                (t, Some(v)) => complete(t, v, defaults, &format!("{at}.value"))?,
            };
            json!({"kind": case, "value": value})
        }
        ("enum", cases) => {
            let case = json.as_str().ok_or_else(wrong)?;
            if !names(cases).any(|n| n == case) {
                bail!(
                    "{at}: `{case}` is not one of {}",
                    names(cases).collect::<Vec<_>>().join(", ")
                );
            }
            json.clone()
        }
        ("option", inner) => match json {
            Value::Null => Value::Null,
            some => complete(inner, some, defaults, at)?,
        },
        ("result", arms) => {
            let object = json.as_object().ok_or_else(wrong)?;
            let (arm, value) = match (object.get("ok"), object.get("err")) {
                (Some(v), None) => ("ok", v),
                (None, Some(v)) => ("err", v),
                _ => return Err(wrong()),
            };
            let value = match &arms[arm] {
                Value::Null => Value::Null,
                t => complete(t, value, defaults, at)?,
            };
            json!({ arm: value })
        }
        ("flags", flags) => {
            let mut set = Vec::new();
            for name in json.as_array().ok_or_else(wrong)? {
                let name = name.as_str().ok_or_else(wrong)?;
                if !names(flags).any(|n| n == name) {
                    bail!("{at}: no flag `{name}`");
                }
                set.push(Value::String(name.into()));
            }
            Value::Array(set)
        }
        (other, _) => bail!("{at}: a {other} cannot be written in a scenario"),
    })
}

/// A record's fields (or a function's parameters) from a JSON object: see
/// the module comment for absent fields and `defaults`.
pub fn complete_fields(
    fields: &[(&str, &Value)],
    object: &Map<String, Value>,
    defaults: &Defaults,
    at: &str,
) -> anyhow::Result<Map<String, Value>> {
    // Unknown names first: a typo also leaves its field missing.
    let known: Vec<String> = fields.iter().map(|(name, _)| json_key(name)).collect();
    if let Some(unknown) = object.keys().find(|k| !known.contains(k)) {
        bail!(
            "{at}: unknown field `{unknown}`; the fields are {}",
            known.join(", ")
        );
    }
    let mut out = Map::new();
    for (name, ty) in fields {
        let key = json_key(name);
        let path = format!("{at}.{key}");
        let given = object.get(&key);
        let value = match (defaults.get(key.as_str()), given) {
            // An optional record given as `null` is none, defaults or not.
            (Some(_), Some(Value::Null)) if kind(ty).0 == "option" => Value::Null,
            (Some(default), given) => {
                let merged = merge(default, given, &path)?;
                let ty = match kind(ty) {
                    ("option", inner) => inner,
                    _ => ty,
                };
                complete(ty, &merged, defaults, &path)?
            }
            (None, Some(given)) => complete(ty, given, defaults, &path)?,
            (None, None) => {
                absent(ty).with_context(|| format!("{path} is missing (a {})", kind(ty).0))?
            }
        };
        out.insert(key, value);
    }
    Ok(out)
}

/// The value of a record field the request left out, where it has one.
fn absent(ty: &Value) -> anyhow::Result<Value> {
    Ok(match kind(ty).0 {
        "option" => Value::Null,
        "list" => Value::Array(Vec::new()),
        "bool" => Value::Bool(false),
        _ => bail!("required"),
    })
}

/// `given`'s fields over `default`'s.
fn merge(default: &Value, given: Option<&Value>, at: &str) -> anyhow::Result<Value> {
    let mut merged = default.clone();
    match given {
        None => {}
        Some(Value::Object(fields)) => {
            let target = merged.as_object_mut().expect("defaults are objects");
            for (key, value) in fields {
                target.insert(key.clone(), value.clone());
            }
        }
        Some(other) => bail!("{at}: expected an object, got {other}"),
    }
    Ok(merged)
}

fn int<T: TryFrom<i64> + TryFrom<u64>>(json: &Value, at: &str) -> anyhow::Result<T> {
    let out_of_range = || anyhow!("{at}: {json} is out of range");
    if let Some(n) = json.as_u64() {
        return T::try_from(n).map_err(|_| out_of_range());
    }
    if let Some(n) = json.as_i64() {
        return T::try_from(n).map_err(|_| out_of_range());
    }
    // `3.0` is the integer 3, as JavaScript reads it too.
    match json.as_f64() {
        Some(x) if x.fract() == 0.0 && x.abs() < 9.007e15 => {
            T::try_from(x as i64).map_err(|_| out_of_range())
        }
        _ => bail!("{at}: expected an integer, got {json}"),
    }
}

// ------------------------------------------------------- wasmtime values

/// A completed value (`complete`) as a wasmtime `Val` of type `ty`.
pub fn to_val(ty: &Value, json: &Value) -> anyhow::Result<Val> {
    let number = || anyhow!("expected a {}, got {json}", kind(ty).0);
    let (i, u) = (json.as_i64(), json.as_u64());
    Ok(match kind(ty) {
        ("bool", _) => Val::Bool(json.as_bool().ok_or_else(number)?),
        ("s8", _) => Val::S8(i.ok_or_else(number)? as i8),
        ("u8", _) => Val::U8(u.ok_or_else(number)? as u8),
        ("s16", _) => Val::S16(i.ok_or_else(number)? as i16),
        ("u16", _) => Val::U16(u.ok_or_else(number)? as u16),
        ("s32", _) => Val::S32(i.ok_or_else(number)? as i32),
        ("u32", _) => Val::U32(u.ok_or_else(number)? as u32),
        ("s64", _) => Val::S64(i.ok_or_else(number)?),
        ("u64", _) => Val::U64(u.ok_or_else(number)?),
        ("f32", _) => Val::Float32(json.as_f64().ok_or_else(number)? as f32),
        ("f64", _) => Val::Float64(json.as_f64().ok_or_else(number)?),
        ("char", _) => Val::Char(
            json.as_str()
                .and_then(|s| s.chars().next())
                .ok_or_else(number)?,
        ),
        ("string", _) => Val::String(json.as_str().ok_or_else(number)?.to_string()),
        ("list", element) => Val::List(
            items(json)?
                .iter()
                .map(|v| to_val(element, v))
                .collect::<anyhow::Result<_>>()?,
        ),
        ("tuple", types) => Val::Tuple(
            types
                .as_array()
                .into_iter()
                .flatten()
                .zip(items(json)?)
                .map(|(t, v)| to_val(t, v))
                .collect::<anyhow::Result<_>>()?,
        ),
        ("record", fields) => Val::Record(
            members(fields)
                .map(|(name, t)| Ok((name.to_string(), to_val(t, &json[json_key(name)])?)))
                .collect::<anyhow::Result<_>>()?,
        ),
        ("variant", cases) => {
            let case = json["kind"].as_str().unwrap_or_default();
            let payload = match members(cases).find(|(n, _)| *n == case) {
                Some((_, Value::Null)) => None,
                Some((_, t)) => Some(Box::new(to_val(t, &json["value"])?)),
                None => bail!("no case `{case}`"),
            };
            Val::Variant(case.to_string(), payload)
        }
        ("enum", _) => Val::Enum(json.as_str().unwrap_or_default().to_string()),
        ("option", inner) => Val::Option(match json {
            Value::Null => None,
            some => Some(Box::new(to_val(inner, some)?)),
        }),
        ("result", arms) => {
            let arm = if json.get("ok").is_some() {
                "ok"
            } else {
                "err"
            };
            let value = match &arms[arm] {
                Value::Null => None,
                t => Some(Box::new(to_val(t, &json[arm])?)),
            };
            Val::Result(if arm == "ok" { Ok(value) } else { Err(value) })
        }
        ("flags", _) => Val::Flags(
            items(json)?
                .iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect(),
        ),
        (other, _) => bail!("a {other} cannot be passed"),
    })
}

fn items(json: &Value) -> anyhow::Result<&Vec<Value>> {
    json.as_array()
        .with_context(|| format!("expected an array, got {json}"))
}

/// Renders a value the component returned.
pub fn to_json(value: &Val) -> Value {
    match value {
        Val::Bool(b) => Value::Bool(*b),
        Val::S8(n) => (*n).into(),
        Val::U8(n) => (*n).into(),
        Val::S16(n) => (*n).into(),
        Val::U16(n) => (*n).into(),
        Val::S32(n) => (*n).into(),
        Val::U32(n) => (*n).into(),
        Val::S64(n) => (*n).into(),
        Val::U64(n) => (*n).into(),
        Val::Float32(x) => float(*x as f64),
        Val::Float64(x) => float(*x),
        Val::Char(c) => Value::String(c.to_string()),
        Val::String(s) => Value::String(s.clone()),
        Val::List(items) | Val::Tuple(items) | Val::FixedLengthList(items) => {
            Value::Array(items.iter().map(to_json).collect())
        }
        Val::Map(pairs) => Value::Array(
            pairs
                .iter()
                .map(|(k, v)| Value::Array(vec![to_json(k), to_json(v)]))
                .collect(),
        ),
        Val::Record(fields) => Value::Object(
            fields
                .iter()
                .map(|(name, v)| (json_key(name), to_json(v)))
                .collect(),
        ),
        Val::Variant(case, payload) => {
            json!({"kind": case, "value": payload.as_deref().map_or(Value::Null, to_json)})
        }
        Val::Enum(case) => Value::String(case.clone()),
        Val::Option(inner) => inner.as_deref().map_or(Value::Null, to_json),
        Val::Result(Ok(v)) => json!({"ok": v.as_deref().map_or(Value::Null, to_json)}),
        Val::Result(Err(e)) => json!({"err": e.as_deref().map_or(Value::Null, to_json)}),
        Val::Flags(set) => Value::Array(set.iter().cloned().map(Value::String).collect()),
        Val::Resource(_) | Val::Future(_) | Val::Stream(_) | Val::ErrorContext(_) => {
            Value::String("<handle>".into())
        }
    }
}

fn float(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

// ------------------------------------------- the crate's bindings, natively

/// A WIT case name as the generated Rust names it: `fts-only` → `FtsOnly`.
fn rust_case(name: &str) -> String {
    name.split('-')
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|c| c.to_uppercase().chain(chars).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

/// A list, tuple or record with `f` applied to each part (by its type); the
/// three keep their JSON shape in both directions of the bindings' serde.
fn each_part(ty: &Value, json: &Value, f: fn(&Value, &Value) -> Value) -> Value {
    let items = || json.as_array().into_iter().flatten();
    match kind(ty) {
        ("list", element) => Value::Array(items().map(|v| f(element, v)).collect()),
        ("tuple", types) => Value::Array(
            types
                .as_array()
                .into_iter()
                .flatten()
                .zip(items())
                .map(|(t, v)| f(t, v))
                .collect(),
        ),
        ("record", fields) => Value::Object(
            members(fields)
                .map(|(name, t)| (json_key(name), f(t, &json[json_key(name)])))
                .collect(),
        ),
        _ => json.clone(),
    }
}

/// A completed value in the serde shape of the generated bindings (serde's
/// defaults: enum and variant cases by their Rust names, externally tagged).
pub fn to_serde(ty: &Value, json: &Value) -> Value {
    match kind(ty) {
        ("list" | "tuple" | "record", _) => each_part(ty, json, to_serde),
        ("variant", cases) => {
            let case = json["kind"].as_str().unwrap_or_default();
            match members(cases).find(|(n, _)| *n == case) {
                Some((_, Value::Null)) | None => Value::String(rust_case(case)),
                Some((_, t)) => json!({ rust_case(case): to_serde(t, &json["value"]) }),
            }
        }
        ("enum", _) => Value::String(rust_case(json.as_str().unwrap_or_default())),
        ("option", inner) if !json.is_null() => to_serde(inner, json),
        ("result", arms) => {
            let (arm, rust) = if json.get("ok").is_some() {
                ("ok", "Ok")
            } else {
                ("err", "Err")
            };
            match &arms[arm] {
                Value::Null => json!({ rust: null }),
                t => json!({ rust: to_serde(t, &json[arm]) }),
            }
        }
        _ => json.clone(),
    }
}

/// A value the crate's bindings serialized, rendered by the rule.
pub fn from_serde(ty: &Value, json: &Value) -> Value {
    match kind(ty) {
        ("list" | "tuple" | "record", _) => each_part(ty, json, from_serde),
        ("variant", cases) => {
            let (rust, payload) = match json {
                Value::String(case) => (case.as_str(), &Value::Null),
                Value::Object(o) => o
                    .iter()
                    .next()
                    .map_or(("", &Value::Null), |(k, v)| (k.as_str(), v)),
                _ => ("", &Value::Null),
            };
            match members(cases).find(|(n, _)| rust_case(n) == rust) {
                Some((name, Value::Null)) => json!({"kind": name, "value": null}),
                Some((name, t)) => json!({"kind": name, "value": from_serde(t, payload)}),
                None => json!({"kind": rust, "value": payload}),
            }
        }
        ("enum", cases) => {
            let rust = json.as_str().unwrap_or_default();
            let name = names(cases).find(|n| rust_case(n) == rust).unwrap_or(rust);
            Value::String(name.to_string())
        }
        ("option", inner) if !json.is_null() => from_serde(inner, json),
        ("result", arms) => match (json.get("Ok"), json.get("Err")) {
            (Some(v), _) => json!({"ok": from_serde_arm(&arms["ok"], v)}),
            (_, Some(e)) => json!({"err": from_serde_arm(&arms["err"], e)}),
            _ => json.clone(),
        },
        ("f32" | "f64", _) if json.is_null() => Value::Null,
        _ => json.clone(),
    }
}

fn from_serde_arm(ty: &Value, json: &Value) -> Value {
    if ty.is_null() {
        Value::Null
    } else {
        from_serde(ty, json)
    }
}

// ------------------------------------------------------------ type data

/// A WIT type as data (`tests/conformance/calls.json`): a primitive's name,
/// or `{"list": T}`, `{"option": T}`, `{"record": [{"name", "type"}]}`,
/// `{"variant": [{"name", "type"}]}` (`type` null without a payload),
/// `{"enum": [names]}`, `{"flags": [names]}`, `{"tuple": [T]}`,
/// `{"result": {"ok", "err"}}`, `{"borrow": {}}` or `{"own": {}}`.
pub fn describe_type(ty: &Type) -> Value {
    let named = |name: &str, ty: Option<Type>| json!({"name": name, "type": ty.as_ref().map(describe_type)});
    match ty {
        Type::Bool => "bool".into(),
        Type::S8 => "s8".into(),
        Type::U8 => "u8".into(),
        Type::S16 => "s16".into(),
        Type::U16 => "u16".into(),
        Type::S32 => "s32".into(),
        Type::U32 => "u32".into(),
        Type::S64 => "s64".into(),
        Type::U64 => "u64".into(),
        Type::Float32 => "f32".into(),
        Type::Float64 => "f64".into(),
        Type::Char => "char".into(),
        Type::String => "string".into(),
        Type::List(l) => json!({"list": describe_type(&l.ty())}),
        Type::Option(o) => json!({"option": describe_type(&o.ty())}),
        Type::Record(r) => {
            json!({"record": r.fields().map(|f| named(f.name, Some(f.ty))).collect::<Vec<_>>()})
        }
        Type::Variant(v) => {
            json!({"variant": v.cases().map(|c| named(c.name, c.ty)).collect::<Vec<_>>()})
        }
        Type::Enum(e) => json!({"enum": e.names().collect::<Vec<_>>()}),
        Type::Flags(f) => json!({"flags": f.names().collect::<Vec<_>>()}),
        Type::Tuple(t) => {
            json!({"tuple": t.types().map(|t| describe_type(&t)).collect::<Vec<_>>()})
        }
        Type::Result(r) => json!({"result": {
            "ok": r.ok().as_ref().map(describe_type),
            "err": r.err().as_ref().map(describe_type),
        }}),
        Type::Borrow(_) => json!({"borrow": {}}),
        Type::Own(_) => json!({"own": {}}),
        Type::Map(m) => json!({"map": [describe_type(&m.key()), describe_type(&m.value())]}),
        Type::FixedLengthList(l) => {
            json!({"fixed-length-list": [describe_type(&l.ty()), l.len()]})
        }
        Type::Future(_) => "future".into(),
        Type::Stream(_) => "stream".into(),
        Type::ErrorContext => "error-context".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit_type() -> Value {
        json!({"record": [
            {"name": "start-line", "type": "u32"},
            {"name": "mode", "type": {"enum": ["hybrid", "fts-only"]}},
            {"name": "heading", "type": {"option": "string"}},
            {"name": "tags", "type": {"list": "string"}},
            {"name": "exact", "type": "bool"},
            {"name": "context", "type": {"option": {"record": [
                {"name": "now-ms", "type": "s64"}, {"name": "owner", "type": "bool"}]}}},
        ]})
    }

    #[test]
    fn values_render_by_the_one_rule() {
        let hit = Val::Record(vec![
            ("start-line".into(), Val::U32(3)),
            ("mode".into(), Val::Enum("fts-only".into())),
            ("heading".into(), Val::Option(None)),
            (
                "vector".into(),
                Val::Option(Some(Box::new(Val::Float32(0.5)))),
            ),
            ("at-ms".into(), Val::S64(-1)),
            ("flags".into(), Val::Flags(vec!["a".into()])),
            ("nan".into(), Val::Float64(f64::NAN)),
        ]);
        assert_eq!(
            to_json(&hit),
            json!({"start_line": 3, "mode": "fts-only", "heading": null, "vector": 0.5,
                   "at_ms": -1, "flags": ["a"], "nan": null})
        );
        let error = Val::Variant("not-found".into(), Some(Box::new(Val::String("x".into()))));
        assert_eq!(to_json(&error), json!({"kind": "not-found", "value": "x"}));
        let ok = Val::Result(Ok(Some(Box::new(Val::Bool(true)))));
        assert_eq!(to_json(&ok), json!({"ok": true}));
        assert_eq!(to_json(&Val::Result(Err(None))), json!({"err": null}));
    }

    #[test]
    fn a_request_is_completed_and_checked() {
        let defaults = Defaults::from([("context", json!({"now_ms": 5, "owner": true}))]);
        let done = complete(
            &hit_type(),
            &json!({"start_line": 1, "mode": "hybrid"}),
            &defaults,
            "$",
        )
        .unwrap();
        assert_eq!(
            done,
            json!({"start_line": 1, "mode": "hybrid", "heading": null, "tags": [], "exact": false,
                   "context": {"now_ms": 5, "owner": true}})
        );
        let partial = json!({"start_line": 1, "mode": "hybrid", "context": {"owner": false}});
        let done = complete(&hit_type(), &partial, &defaults, "$").unwrap();
        assert_eq!(done["context"], json!({"now_ms": 5, "owner": false}));
        let none = json!({"start_line": 1, "mode": "hybrid", "context": null});
        assert_eq!(
            complete(&hit_type(), &none, &defaults, "$").unwrap()["context"],
            Value::Null
        );
        let typo = complete(&hit_type(), &json!({"strat_line": 1}), &defaults, "$").unwrap_err();
        assert!(format!("{typo:#}").contains("unknown field `strat_line`"));
        let missing =
            complete(&hit_type(), &json!({"mode": "hybrid"}), &defaults, "$").unwrap_err();
        assert!(format!("{missing:#}").contains("$.start_line is missing"));
        let bad = complete(
            &hit_type(),
            &json!({"start_line": 1, "mode": "fast"}),
            &defaults,
            "$",
        );
        assert!(format!("{:#}", bad.unwrap_err()).contains("`fast` is not one of hybrid, fts-only"));
    }

    #[test]
    fn integers_are_range_checked() {
        assert_eq!(int::<u8>(&json!(255), "$").unwrap(), 255);
        assert!(int::<u8>(&json!(256), "$").is_err());
        assert!(int::<u32>(&json!(-1), "$").is_err());
        assert_eq!(int::<i64>(&json!(-5), "$").unwrap(), -5);
        assert!(int::<u32>(&json!(1.5), "$").is_err());
        assert_eq!(int::<u32>(&json!(3.0), "$").unwrap(), 3);
    }

    #[test]
    fn the_bindings_serde_shapes_round_trip() {
        let ty = json!({"result": {"ok": hit_type(), "err": {"variant": [
            {"name": "not-found", "type": "string"}, {"name": "gone", "type": null}]}}});
        let ok = json!({"ok": {"start_line": 1, "mode": "fts-only", "heading": "h", "tags": ["a"],
                               "exact": true, "context": null}});
        let serde = to_serde(&ty, &ok);
        assert_eq!(serde["Ok"]["mode"], json!("FtsOnly"));
        assert_eq!(from_serde(&ty, &serde), ok);
        let err = json!({"err": {"kind": "not-found", "value": "x"}});
        assert_eq!(to_serde(&ty, &err), json!({"Err": {"NotFound": "x"}}));
        assert_eq!(from_serde(&ty, &to_serde(&ty, &err)), err);
        let unit = json!({"err": {"kind": "gone", "value": null}});
        assert_eq!(to_serde(&ty, &unit), json!({"Err": "Gone"}));
        assert_eq!(from_serde(&ty, &json!({"Err": "Gone"})), unit);
        assert_eq!(rust_case("unicode61"), "Unicode61");
    }
}
