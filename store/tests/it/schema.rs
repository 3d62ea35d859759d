//! `migrations/sqlite` and `migrations/postgres` must describe one schema: after both
//! sets are applied, the tables, their columns (with types as far as the two databases'
//! types compare, nullability and primary keys) and their indexes are the same.

use std::collections::BTreeSet;
use std::sync::Mutex;

use sqlx::{AnyConnection, Connection, Row};
use store::{Backend, Store};

/// One column: table, name, type class, nullable, part of the primary key.
type Column = (String, String, &'static str, bool, bool);
/// One index other than a primary key: table, columns, unique, partial.
type Index = (String, Vec<String>, bool, bool);

#[derive(Debug, PartialEq)]
struct Schema {
    columns: BTreeSet<Column>,
    indexes: BTreeSet<Index>,
}

/// The two databases' names for one kind of value.
fn class(declared: &str) -> &'static str {
    match declared.to_ascii_lowercase().as_str() {
        "text" | "character varying" => "text",
        "integer" | "bigint" => "integer",
        "double precision" | "real" => "float",
        "blob" | "bytea" => "bytes",
        other => panic!("a column type the schema test does not know: {other}"),
    }
}

async fn sqlite(conn: &mut AnyConnection) -> Schema {
    let tables: Vec<String> = sqlx::query(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '_sqlx_migrations'",
    )
    .fetch_all(&mut *conn)
    .await
    .unwrap()
    .iter()
    .map(|r| r.get::<String, _>(0))
    .collect();
    let mut schema = Schema { columns: BTreeSet::new(), indexes: BTreeSet::new() };
    for table in tables {
        for r in sqlx::query(&format!("PRAGMA table_info({table})")).fetch_all(&mut *conn).await.unwrap() {
            let pk = r.get::<i64, _>("pk") > 0;
            let nullable = r.get::<i64, _>("notnull") == 0 && !pk;
            let declared: String = r.get("type");
            schema.columns.insert((table.clone(), r.get("name"), class(&declared), nullable, pk));
        }
        for r in sqlx::query(&format!("PRAGMA index_list({table})")).fetch_all(&mut *conn).await.unwrap() {
            let origin: String = r.get("origin");
            if origin == "pk" {
                continue;
            }
            let name: String = r.get("name");
            let columns: Vec<String> = sqlx::query(&format!("PRAGMA index_info({name})"))
                .fetch_all(&mut *conn)
                .await
                .unwrap()
                .iter()
                .map(|c| c.get::<String, _>("name"))
                .collect();
            schema.indexes.insert((
                table.clone(),
                columns,
                r.get::<i64, _>("unique") == 1,
                r.get::<i64, _>("partial") == 1,
            ));
        }
    }
    schema
}

async fn postgres(conn: &mut AnyConnection) -> Schema {
    let mut schema = Schema { columns: BTreeSet::new(), indexes: BTreeSet::new() };
    let pk: BTreeSet<(String, String)> = sqlx::query(
        "SELECT k.table_name::text, k.column_name::text FROM information_schema.table_constraints c \
         JOIN information_schema.key_column_usage k ON k.constraint_name = c.constraint_name AND k.table_schema = c.table_schema \
         WHERE c.constraint_type = 'PRIMARY KEY' AND c.table_schema = 'public'",
    )
    .fetch_all(&mut *conn)
    .await
    .unwrap()
    .iter()
    .map(|r| (r.get(0), r.get(1)))
    .collect();
    for r in sqlx::query(
        "SELECT table_name::text, column_name::text, data_type::text, is_nullable::text FROM information_schema.columns \
         WHERE table_schema = 'public' AND table_name <> '_sqlx_migrations'",
    )
    .fetch_all(&mut *conn)
    .await
    .unwrap()
    {
        let (table, column): (String, String) = (r.get(0), r.get(1));
        let declared: String = r.get(2);
        let key = pk.contains(&(table.clone(), column.clone()));
        let nullable = r.get::<String, _>(3) == "YES";
        schema.columns.insert((table, column, class(&declared), nullable, key));
    }
    for r in sqlx::query(
        "SELECT t.relname::text, i.relname::text, x.indisunique, x.indpred IS NOT NULL, \
         array_to_string(ARRAY(SELECT a.attname::text FROM unnest(x.indkey) WITH ORDINALITY AS k(attnum, n) \
           JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum ORDER BY k.n), ',') \
         FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid \
         JOIN pg_namespace s ON s.oid = t.relnamespace \
         WHERE s.nspname = 'public' AND NOT x.indisprimary AND t.relname <> '_sqlx_migrations'",
    )
    .fetch_all(&mut *conn)
    .await
    .unwrap()
    {
        let columns: String = r.get(4);
        schema.indexes.insert((
            r.get(0),
            columns.split(',').map(str::to_owned).collect(),
            r.get(2),
            r.get(3),
        ));
    }
    schema
}

#[tokio::test]
async fn both_migration_sets_describe_the_same_schema() {
    let schemas = Mutex::new(Vec::new());
    store::testing::for_each_backend(|backend, blobs| {
        let schemas = &schemas;
        async move {
            drop(Store::open(&backend, &blobs).await.unwrap());
            let (url, sqlite_db) = match &backend {
                Backend::Sqlite { path } => (format!("sqlite://{}", path.display()), true),
                Backend::Postgres { url } => (url.clone(), false),
            };
            let mut conn = AnyConnection::connect(&url).await.unwrap();
            let schema = if sqlite_db { sqlite(&mut conn).await } else { postgres(&mut conn).await };
            assert!(schema.columns.len() > 40 && !schema.indexes.is_empty(), "{schema:?}");
            schemas.lock().unwrap().push(schema);
        }
    })
    .await;
    let schemas = schemas.into_inner().unwrap();
    if std::env::var("TEST_DATABASE_URL").is_err() {
        assert_eq!(schemas.len(), 1, "SQLite alone: nothing to compare without PostgreSQL");
        return;
    }
    let (sqlite, postgres) = (&schemas[0], &schemas[1]);
    let only = |a: &Schema, b: &Schema| -> (Vec<Column>, Vec<Index>) {
        (
            a.columns.difference(&b.columns).cloned().collect(),
            a.indexes.difference(&b.indexes).cloned().collect(),
        )
    };
    assert_eq!(only(sqlite, postgres), (vec![], vec![]), "in SQLite's schema only");
    assert_eq!(only(postgres, sqlite), (vec![], vec![]), "in PostgreSQL's schema only");
}
