//! The API's OpenAPI 3.1 document: its title, tags and security scheme. Its paths come
//! from the router's one list of routes (`router::api`, utoipa-axum), each derived from
//! its handler's annotations and the types it returns (the views, the
//! store's model, the vocabulary).

use utoipa::openapi::OpenApi as Document;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "RExBench leaderboard API",
        version = "1",
        description = "Signed result bundles in; leaderboard, agents, tasks, runs, the change log, the key registry and each submission's signed envelope out. Errors are `{\"error\": {\"code\", \"message\"}}` with a fitting status. How the statistics are made: `/about`. The outputs of runs of tasks whose outputs are private (RExBench's) are served only to their submitter (signed in with `rexbench login`: a `session_token`) and to the maintainers (`admin_token`); every number, and each output's SHA-256, is public.",
    ),
    modifiers(&AdminToken),
    tags(
        (name = "results", description = "The leaderboard and what it is made of"),
        (name = "submissions", description = "Sending a signed result bundle"),
        (name = "evidence", description = "What a reader needs to check the numbers: keys, envelopes, artifacts"),
        (name = "reproductions", description = "The maintainers re-run a sample of every self-reported submission: the sampling keys' commitments and revealed keys, and each submission's sample"),
        (name = "admin", description = "The key registry, key requests' approval, the review of integrity findings, the reproduction queue, task sets and held-out variants, who may read each task's outputs and who read private ones, with `REXBENCH_ADMIN_TOKEN`"),
        (name = "key requests", description = "A submitter's key asks to be registered (proof of possession, `rexbench register`); its status, for anyone; its contact and held bundles, for its holder and the maintainers"),
        (name = "sign-in", description = "A registered key signs a challenge: a session token for the API, and a one-time link for a browser"),
    )
)]
struct ApiDoc;

/// The bearer tokens: the admin endpoints want the admin token; private outputs are
/// served to it and to a signed-in submitter's session token (`rxs_…`).
struct AdminToken;

impl Modify for AdminToken {
    fn modify(&self, doc: &mut Document) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "admin_token",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        components.add_security_scheme(
            "session_token",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("From `POST /api/v1/login` (`rexbench login`), valid for an hour"))
                    .build(),
            ),
        );
    }
}

/// The document without its paths, which the router adds as it lists the routes.
pub fn frame() -> Document {
    ApiDoc::openapi()
}
