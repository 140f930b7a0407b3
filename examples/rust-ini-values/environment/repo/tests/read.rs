use tinyini::Ini;

const CONFIG: &str = "\
; deployment settings
[server]
host = example.invalid
port = 8080

# the database
[database]
name = app
user = app_rw
";

#[test]
fn reads_sections_and_keys() {
    let ini = Ini::parse(CONFIG).unwrap();
    assert_eq!(ini.sections().collect::<Vec<_>>(), vec!["database", "server"]);
    assert_eq!(ini.get("server", "port"), Some("8080"));
    assert_eq!(ini.get("database", "user"), Some("app_rw"));
    assert_eq!(ini.get("database", "port"), None);
}

#[test]
fn last_value_wins() {
    let ini = Ini::parse("[a]\nx = 1\nx = 2\n").unwrap();
    assert_eq!(ini.get("a", "x"), Some("2"));
}

#[test]
fn line_without_equals_sign() {
    let err = Ini::parse("[a]\nx = 1\njust words\n").unwrap_err();
    assert_eq!(err.line, 3);
    assert_eq!(err.message, "expected `key = value`");
}

#[test]
fn empty_key() {
    assert_eq!(Ini::parse(" = 1\n").unwrap_err().message, "empty key");
}
