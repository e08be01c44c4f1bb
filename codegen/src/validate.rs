//! The rules Kafka's generator enforces on a schema, plus a few it leaves to chance
//! (leading-zero integer defaults, which Java would read as octal).

use crate::model::{
    Field, FieldType, Message, MessageKind, Primitive, SchemaSet, Struct, Versions,
};
use crate::Error;

/// Rules about one field on its own.
fn validate_field(field: &Field, message_flexible: Versions) -> Result<(), String> {
    let name_ok = field.name.starts_with(|c: char| c.is_ascii_alphabetic())
        && field.name.chars().all(|c| c.is_ascii_alphanumeric());
    if !name_ok {
        return Err(format!("invalid field name `{}`", field.name));
    }
    if !field.nullable_versions.is_empty() && !field.ty.can_be_null() {
        return Err(format!("a {} field cannot be nullable", field.ty));
    }
    if let Some(flexible) = field.flexible_versions {
        if !matches!(
            field.ty.primitive(),
            Some(Primitive::String | Primitive::Bytes)
        ) {
            return Err("only string and bytes fields may override `flexibleVersions`".into());
        }
        if !flexible.is_empty() && !message_flexible.contains_range(&flexible) {
            return Err("the field's `flexibleVersions` must lie inside the message's".into());
        }
    }
    if field.zero_copy && field.ty.primitive() != Some(Primitive::Bytes) {
        return Err("`zeroCopy` is only for bytes fields".into());
    }
    match (field.tag, field.tagged_versions.is_empty()) {
        (Some(_), true) => return Err("`tag` needs `taggedVersions`".into()),
        (None, false) => return Err("`taggedVersions` needs a `tag`".into()),
        _ => {}
    }
    if field.tag.is_some() {
        if !field.tagged_versions.is_open_ended() {
            return Err("`taggedVersions` must be open-ended (`N+`)".into());
        }
        if !field.versions.contains_range(&field.tagged_versions) {
            return Err("`taggedVersions` must lie inside `versions`".into());
        }
        let flexible = field.flexible_versions.unwrap_or(message_flexible);
        if !flexible.contains_range(&field.tagged_versions) {
            return Err("tagged fields exist only in flexible versions".into());
        }
        if field.map_key {
            return Err("a tagged field cannot be a map key".into());
        }
        if field.ty.primitive() == Some(Primitive::Records) {
            return Err("a records field cannot be tagged".into());
        }
        let nullable_tagged = field.nullable_versions.intersect(&field.tagged_versions);
        if !nullable_tagged.is_empty() && nullable_tagged != field.tagged_versions {
            return Err(
                "a tagged field must be nullable in all or none of its tagged versions".into(),
            );
        }
    }
    if let Some(entity) = &field.entity_type {
        let base = match &field.ty {
            FieldType::Array(element) => element.primitive(),
            other => other.primitive(),
        };
        let expected = match entity.as_str() {
            "unknown" => None,
            "transactionalId" | "groupId" | "topicName" => Some(Primitive::String),
            "producerId" => Some(Primitive::Int64),
            "brokerId" => Some(Primitive::Int32),
            other => return Err(format!("unknown entityType `{other}`")),
        };
        if expected.is_some() && base != expected {
            return Err(format!(
                "entityType {entity} does not fit type {}",
                field.ty
            ));
        }
    }
    Ok(())
}

fn validate_struct(message: &Message, s: &Struct, top_level: bool) -> Result<(), String> {
    let mut names: Vec<&str> = Vec::new();
    for field in &s.fields {
        validate_field(field, message.flexible_versions)
            .map_err(|e| format!("field {}: {e}", field.name))?;
        if names.contains(&field.name.as_str()) {
            return Err(format!(
                "struct {}: field `{}` appears twice",
                s.name, field.name
            ));
        }
        names.push(&field.name);
        if top_level && field.map_key {
            return Err(format!(
                "field {}: the top-level struct cannot have map keys",
                field.name
            ));
        }
        if let Some(target) = field.ty.struct_name() {
            if message.struct_by_name(target).is_none() {
                return Err(format!(
                    "field {}: struct {target} is not defined",
                    field.name
                ));
            }
        }
    }
    let mut tags: Vec<u32> = s.fields.iter().filter_map(|f| f.tag).collect();
    tags.sort_unstable();
    for (expected, tag) in tags.iter().enumerate() {
        if *tag != expected as u32 {
            return Err(format!(
                "struct {}: tags must be unique and contiguous from 0, found {tags:?}",
                s.name
            ));
        }
    }
    Ok(())
}

/// Rules about a whole message file: each struct, each field.
pub fn validate_message(message: &Message) -> Result<(), String> {
    validate_struct(message, &message.root, true)?;
    for s in &message.structs {
        validate_struct(message, s, false)?;
    }
    if message.root.name == message.name && message.structs.iter().any(|s| s.name == message.name) {
        return Err(format!(
            "struct name {} clashes with the message",
            message.name
        ));
    }
    Ok(())
}

/// Rules across files: one request and one response per API key, sharing the key.
pub fn validate_set(set: &SchemaSet) -> Result<(), Error> {
    let fail = |file: &str, message: String| Error::Schema {
        file: file.to_owned(),
        message,
    };
    let mut names = std::collections::HashSet::new();
    for message in &set.messages {
        if !names.insert(message.name.as_str()) {
            return Err(fail(&message.name, "defined twice".into()));
        }
        for (kind, suffix) in [
            (MessageKind::Request, "Request"),
            (MessageKind::Response, "Response"),
        ] {
            if message.kind == kind && !message.name.ends_with(suffix) {
                return Err(fail(
                    &message.name,
                    format!("a {suffix} schema's name must end in {suffix}"),
                ));
            }
        }
        if message.kind == MessageKind::Request {
            let response_name = format!("{}Response", message.name.trim_end_matches("Request"));
            let response = set
                .find(&response_name)
                .ok_or_else(|| fail(&message.name, format!("no {response_name}")))?;
            if response.api_key != message.api_key {
                return Err(fail(
                    &message.name,
                    format!("{response_name} has a different apiKey"),
                ));
            }
            if response.is_retired() != message.is_retired() {
                return Err(fail(
                    &message.name,
                    format!("{response_name} is retired differently"),
                ));
            }
            let clash = set.messages.iter().any(|other| {
                other.kind == MessageKind::Request
                    && other.name != message.name
                    && other.api_key == message.api_key
            });
            if clash {
                return Err(fail(
                    &message.name,
                    "another request uses the same apiKey".into(),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::model::Message;
    use crate::parse::parse_schema;

    fn load(fields: &str, flexible: &str) -> Result<Message, String> {
        let text = format!(
            r#"{{"name":"TestRequest","type":"request","apiKey":1000,"validVersions":"0-3",
                "flexibleVersions":"{flexible}","fields":[{fields}]}}"#
        );
        let message = Message::from_raw(parse_schema(&text)?)?;
        super::validate_message(&message)?;
        Ok(message)
    }

    fn refused(fields: &str, flexible: &str, expected: &str) {
        let err = load(fields, flexible).expect_err(fields);
        assert!(
            err.contains(expected),
            "{err} does not mention {expected:?}"
        );
    }

    #[test]
    fn accepts_a_well_formed_schema() {
        let message = load(
            r#"{"name":"A","type":"int32","versions":"0+"},
               {"name":"B","type":"string","versions":"1+","nullableVersions":"1+","default":"null"},
               {"name":"C","type":"[]Item","versions":"0+","fields":[
                   {"name":"K","type":"int16","versions":"0+","mapKey":true}]},
               {"name":"T","type":"uuid","versions":"2+","taggedVersions":"2+","tag":0}"#,
            "2+",
        )
        .unwrap();
        assert_eq!(message.root.known_tags, 1);
        assert_eq!(message.structs[0].name, "Item");
    }

    #[test]
    fn refuses_what_kafka_refuses() {
        refused(
            r#"{"name":"A","type":"int32","versions":"0+","nullableVersions":"0+"}"#,
            "none",
            "cannot be nullable",
        );
        refused(
            r#"{"name":"A","type":"int32","versions":"0+","tag":0,"taggedVersions":"0+"}"#,
            "none",
            "flexible",
        );
        refused(
            r#"{"name":"A","type":"int32","versions":"1+","tag":1,"taggedVersions":"1+"}"#,
            "0+",
            "contiguous",
        );
        refused(
            r#"{"name":"A","type":"int32","versions":"0+","tag":0}"#,
            "0+",
            "taggedVersions",
        );
        refused(
            r#"{"name":"A","type":"int32","versions":"0+","tag":0,"taggedVersions":"1-2"}"#,
            "0+",
            "open-ended",
        );
        refused(
            r#"{"name":"A","type":"string","versions":"0+","default":"null"}"#,
            "none",
            "nullable",
        );
        refused(
            r#"{"name":"A","type":"int8","versions":"0+","default":"300"}"#,
            "none",
            "invalid int8 default",
        );
        refused(
            r#"{"name":"A","type":"int32","versions":"0+","default":"010"}"#,
            "none",
            "invalid int32 default",
        );
        refused(
            r#"{"name":"A","type":"bytes","versions":"0+","default":"abc"}"#,
            "none",
            "empty or null",
        );
        refused(
            r#"{"name":"A","type":"int32","versions":"0+","zeroCopy":true}"#,
            "none",
            "zeroCopy",
        );
        refused(
            r#"{"name":"A","type":"int32","versions":"0+","flexibleVersions":"none"}"#,
            "0+",
            "only string and bytes",
        );
        refused(
            r#"{"name":"A","type":"int32","versions":"0+","mapKey":true}"#,
            "none",
            "map keys",
        );
        refused(
            r#"{"name":"A","type":"[][]int32","versions":"0+"}"#,
            "none",
            "arrays of arrays",
        );
        refused(
            r#"{"name":"A","type":"Missing","versions":"0+"}"#,
            "none",
            "not defined",
        );
        refused(
            r#"{"name":"A","type":"int32","versions":"0+"},{"name":"A","type":"int32","versions":"0+"}"#,
            "none",
            "twice",
        );
        refused(
            r#"{"name":"A","type":"records","versions":"0+","tag":0,"taggedVersions":"0+"}"#,
            "0+",
            "records",
        );
        refused(
            r#"{"name":"A","type":"int32","versions":"0+","entityType":"topicName"}"#,
            "none",
            "entityType",
        );
        refused(
            r#"{"name":"A","type":"int32","versions":"0+"}"#,
            "1-2",
            "open-ended",
        );
    }
}
