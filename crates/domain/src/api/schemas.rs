//! The OpenAPI schemas of the two bodies whose exact shapes serde's derive
//! cannot say: [`NewPlayerBody`] (a name alone, or a login with its
//! password) and [`ActionBody`] (four shapes, by `seq` and `action`). Each
//! is the type's own `ToSchema`, so that the document names the type that
//! reads the body; the schema is written as the document's JSON, and the
//! tests below hold it to the type: every shape's example reads, and what
//! the shapes leave out is refused.

use super::{ActionBody, NewPlayerBody};
use serde_json::{Value, json};
use std::borrow::Cow;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::Schema;

/// A schema of this file, from its JSON.
fn schema(value: Value) -> RefOr<Schema> {
    serde_json::from_value(value).expect("a schema of api/schemas.rs reads as a schema")
}

/// A name: at most 64 characters, no control character.
const NAME: &str = "^[^\\u0000-\\u001F\\u007F-\\u009F]*$";
/// A card of the hand, any case.
const CARD: &str = "^(7|8|9|10|[JjQqKkAa])$";
/// A player's seed: 1 to 64 printable ASCII characters, no space.
const CLIENT_SEED: &str = "^[!-~]{1,64}$";

impl utoipa::PartialSchema for NewPlayerBody {
    fn schema() -> RefOr<Schema> {
        schema(json!({
            "description": "`POST /api/players`'s body: a name alone, or a login with its password, so that \
                            every body the document allows is one the server takes.",
            "oneOf": [
                {"$ref": "#/components/schemas/AnonymousPlayer",
                 "description": "A player without a login (play at once; `PUT /api/me/credentials` later)."},
                {"$ref": "#/components/schemas/PlayerWithLogin",
                 "description": "A player who keeps their account with a login and a password."},
            ],
        }))
    }
}

impl utoipa::ToSchema for NewPlayerBody {
    fn name() -> Cow<'static, str> {
        "NewPlayerBody".into()
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        let name = json!({"type": ["string", "null"], "maxLength": 64, "pattern": NAME});
        let described_name = json!({
            "type": ["string", "null"], "maxLength": 64, "pattern": NAME,
            "description": "A display name, at most 64 characters, no control character.",
        });
        schemas.extend([
            (
                "AnonymousPlayer".to_string(),
                schema(json!({
                    "type": "object",
                    "description": "`{\"name\": \"...\"}`",
                    "properties": {"name": described_name},
                    "additionalProperties": false,
                })),
            ),
            (
                "PlayerWithLogin".to_string(),
                schema(json!({
                    "type": "object",
                    "description": "`{\"name\": \"...\", \"login\": \"...\", \"password\": \"...\"}`",
                    "required": ["login", "password"],
                    "properties": {
                        "name": name,
                        "login": {"type": "string", "pattern": "^[A-Za-z0-9._-]{3,32}$",
                                  "description": "3 to 32 of `a-z 0-9 . _ -` (upper case is folded to lower case)."},
                        "password": {"type": "string", "minLength": 8, "maxLength": 128,
                                     "description": "8 to 128 characters."},
                    },
                    "additionalProperties": false,
                })),
            ),
        ]);
    }
}

impl utoipa::PartialSchema for ActionBody {
    fn schema() -> RefOr<Schema> {
        schema(json!({
            "description": "`POST /api/tickets/{id}/actions`'s body: one of four exact shapes, so that every \
                            body the document allows is one the server reads (Schemathesis checks it). Whether \
                            the action fits the ticket's state (its `seq`, its phase, the cards in hand) is the \
                            game's rule, answered 409 or 422.",
            "oneOf": [
                {"$ref": "#/components/schemas/FirstPlay",
                 "description": "The ticket's first action (`seq` 0): a card, and optionally the player's seed."},
                {"$ref": "#/components/schemas/LaterPlay", "description": "A later card."},
                {"$ref": "#/components/schemas/FirstDraw",
                 "description": "The first action as a deck click (refused 422: a ticket starts with a card)."},
                {"$ref": "#/components/schemas/LaterDraw",
                 "description": "A click on the 16-card deck (art. 3.2.4.2, 3.2.5.2)."},
            ],
        }))
    }
}

impl utoipa::ToSchema for ActionBody {
    fn name() -> Cow<'static, str> {
        "ActionBody".into()
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        let first = json!({"type": "integer", "format": "int64", "minimum": 0, "maximum": 0});
        let later = json!({"type": "integer", "format": "int64", "minimum": 1});
        let play = json!({"$ref": "#/components/schemas/PlayTag"});
        let draw = json!({"$ref": "#/components/schemas/DrawTag"});
        let shape = |description: &str, required: &[&str], properties: Value| {
            schema(json!({
                "type": "object",
                "description": description,
                "required": required,
                "properties": properties,
                "additionalProperties": false,
            }))
        };
        schemas.extend([
            ("FirstPlay".to_string(), shape(
                "`{\"seq\": 0, \"action\": \"play\", \"card\": \"Q\", \"client_seed\": \"...\"}`",
                &["seq", "action", "card"],
                json!({
                    "seq": first, "action": play,
                    "card": {"type": "string", "pattern": CARD,
                             "description": "A card of the hand: `7` `8` `9` `10` `J` `Q` `K` `A` (any case)."},
                    "client_seed": {"type": ["string", "null"], "pattern": CLIENT_SEED,
                                    "description": "The player's seed: 1 to 64 printable ASCII characters, no space."},
                }),
            )),
            ("LaterPlay".to_string(), shape(
                "`{\"seq\": n, \"action\": \"play\", \"card\": \"Q\"}`, n at least 1.",
                &["seq", "action", "card"],
                json!({"seq": later, "action": play, "card": {"type": "string", "pattern": CARD}}),
            )),
            ("FirstDraw".to_string(), shape(
                "`{\"seq\": 0, \"action\": \"draw\", \"client_seed\": \"...\"}`",
                &["seq", "action"],
                json!({
                    "seq": first, "action": draw,
                    "client_seed": {"type": ["string", "null"], "pattern": CLIENT_SEED},
                }),
            )),
            ("LaterDraw".to_string(), shape(
                "`{\"seq\": n, \"action\": \"draw\"}`, n at least 1.",
                &["seq", "action"],
                json!({"seq": later, "action": draw}),
            )),
            ("PlayTag".to_string(), schema(json!({"type": "string", "description": "`play`", "enum": ["play"]}))),
            ("DrawTag".to_string(), schema(json!({"type": "string", "description": "`draw`", "enum": ["draw"]}))),
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ActionRequest, PASSWORD_MAX_CHARS};
    use super::*;
    use utoipa::ToSchema;

    /// The type's schema and the schemas it names, as the document holds them.
    fn components<T: ToSchema>() -> serde_json::Map<String, Value> {
        let mut all = vec![(T::name().to_string(), T::schema())];
        T::schemas(&mut all);
        all.into_iter().map(|(name, s)| (name, serde_json::to_value(s).unwrap())).collect()
    }

    /// Each of `bodies` names only properties of its shape and reads as `T`.
    fn read_as<T: serde::de::DeserializeOwned>(shapes: &serde_json::Map<String, Value>, bodies: &[(&str, &str)]) {
        for (shape, body) in bodies {
            let properties = shapes[*shape]["properties"].as_object().unwrap();
            let value: Value = serde_json::from_str(body).unwrap();
            for field in value.as_object().unwrap().keys() {
                assert!(properties.contains_key(field), "{shape} has no {field}");
            }
            if let Err(e) = serde_json::from_str::<T>(body) {
                panic!("{shape}: {body}: {e}");
            }
        }
    }

    #[test]
    fn every_shape_of_an_action_reads_as_the_server_reads_it() {
        let shapes = components::<ActionBody>();
        read_as::<ActionRequest>(
            &shapes,
            &[
                ("FirstPlay", r#"{"seq": 0, "action": "play", "card": "q", "client_seed": "abc"}"#),
                ("FirstPlay", r#"{"seq": 0, "action": "play", "card": "10"}"#),
                ("LaterPlay", r#"{"seq": 3, "action": "play", "card": "A"}"#),
                ("FirstDraw", r#"{"seq": 0, "action": "draw", "client_seed": "x"}"#),
                ("LaterDraw", r#"{"seq": 7, "action": "draw"}"#),
            ],
        );
        // What no shape allows is refused when read.
        for body in [
            r#"{"seq": 1, "action": "play", "card": "Q", "extra": 1}"#,
            r#"{"seq": 1, "action": "jump"}"#,
            r#"{"seq": 1, "action": "play"}"#,
            r#"{"seq": 1, "action": "draw", "card": "Q"}"#,
        ] {
            assert!(serde_json::from_str::<ActionRequest>(body).is_err(), "{body}");
        }
        for shape in ["FirstPlay", "LaterPlay", "FirstDraw", "LaterDraw"] {
            assert_eq!(shapes[shape]["additionalProperties"], false, "{shape}");
        }
        assert_eq!(shapes["FirstPlay"]["properties"]["seq"]["maximum"], 0);
    }

    #[test]
    fn both_shapes_of_a_new_player_read_as_the_server_reads_them() {
        let shapes = components::<NewPlayerBody>();
        read_as::<NewPlayerBody>(
            &shapes,
            &[
                ("AnonymousPlayer", r#"{"name": "Ana"}"#),
                ("AnonymousPlayer", r#"{}"#),
                ("PlayerWithLogin", r#"{"name": null, "login": "ana", "password": "12345678"}"#),
            ],
        );
        // A login is never null, and no other field is read.
        for body in [r#"{"login": null, "password": "12345678"}"#, r#"{"name": "Ana", "age": 30}"#] {
            assert!(serde_json::from_str::<NewPlayerBody>(body).is_err(), "{body}");
        }
        let password = &shapes["PlayerWithLogin"]["properties"]["password"];
        assert_eq!(password["maxLength"], PASSWORD_MAX_CHARS);
    }
}
