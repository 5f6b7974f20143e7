// The client matrix for pgJDBC: every check prints one line, and
// tests/client_matrix.rs compares the whole transcript with the one
// PostgreSQL 15 gives. Run with a JVM zone that is not UTC:
//   java -Duser.timezone=Europe/Paris -cp postgresql.jar:. Matrix PORT
import java.math.BigDecimal;
import java.sql.*;
import java.util.*;

public class Matrix {
    static Connection conn;

    interface Check { Object run() throws SQLException; }

    static String show(Object v) {
        if (v == null) return "null";
        if (v instanceof byte[]) {
            StringBuilder sb = new StringBuilder("bytes<");
            for (byte b : (byte[]) v) sb.append(String.format("%02x", b));
            return sb.append(">").toString();
        }
        if (v instanceof Array) {
            try {
                return "Array<" + show(((Array) v).getArray()) + ">";
            } catch (SQLException e) {
                return "Array<" + e.getSQLState() + ">";
            }
        }
        if (v instanceof Object[]) {
            List<String> parts = new ArrayList<>();
            for (Object o : (Object[]) v) parts.add(show(o));
            return parts.toString();
        }
        if (v instanceof int[]) return Arrays.toString((int[]) v);
        if (v instanceof List) {
            List<String> parts = new ArrayList<>();
            for (Object o : (List<?>) v) parts.add(show(o));
            return parts.toString();
        }
        return v.getClass().getSimpleName() + ":" + v;
    }

    static void check(String label, Check c) {
        String out;
        try {
            out = show(c.run());
        } catch (SQLException e) {
            out = "ERROR " + e.getSQLState() + " " + e.getMessage().split("\n")[0];
            try {
                if (!conn.getAutoCommit()) conn.rollback();
            } catch (SQLException ignored) {
            }
        }
        System.out.println(label + ": " + out);
    }

    static List<Object> row(ResultSet rs) throws SQLException {
        List<Object> r = new ArrayList<>();
        for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) r.add(rs.getObject(i));
        return r;
    }

    static List<Object> rows(PreparedStatement ps) throws SQLException {
        List<Object> out = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) out.add(row(rs));
        }
        return out;
    }

    static List<Object> query(String sql) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            return rows(ps);
        }
    }

    static void exec(String sql) throws SQLException {
        try (Statement st = conn.createStatement()) {
            st.execute(sql);
        }
    }

    public static void main(String[] args) throws Exception {
        String url = "jdbc:postgresql://127.0.0.1:" + args[0] + "/postgres";
        Properties props = new Properties();
        props.setProperty("user", "postgres");
        conn = DriverManager.getConnection(url, props);
        check("TimeZone from the JVM", () -> query("show timezone"));

        String[] literals = {
            "1::int2", "2::int4", "3::int8", "1.5::float4", "2.25::float8", "1.50::numeric",
            "true", "'x'::text", "'ab'::varchar(3)", "'b'::char(3)", "'\\x0001ff'::bytea",
            "'{\"a\": 1}'::json", "'{\"b\": [1, 2.50]}'::jsonb",
            "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid",
            "'1 year 2 mons 3 days 04:05:06.5'::interval", "'2024-02-29'::date",
            "'2024-02-29 12:34:56.789'::timestamp", "'2024-03-31 01:30:00+00'::timestamptz",
            "'{1,2,3}'::int4[]", "'{\"a b\",NULL}'::text[]", "NULL::int",
        };
        for (String lit : literals) {
            check("select " + lit, () -> query("select " + lit));
        }

        // PreparedStatement parameters of every kind.
        check("setInt", () -> { PreparedStatement p = conn.prepareStatement("select ? + 1"); p.setInt(1, 41); return rows(p); });
        check("setLong", () -> { PreparedStatement p = conn.prepareStatement("select ?"); p.setLong(1, 1L << 40); return rows(p); });
        check("setDouble", () -> { PreparedStatement p = conn.prepareStatement("select ?"); p.setDouble(1, 0.1); return rows(p); });
        check("setBigDecimal", () -> { PreparedStatement p = conn.prepareStatement("select ?"); p.setBigDecimal(1, new BigDecimal("3.140")); return rows(p); });
        check("setString", () -> { PreparedStatement p = conn.prepareStatement("select ? || '!'"); p.setString(1, "héllo"); return rows(p); });
        check("setBoolean", () -> { PreparedStatement p = conn.prepareStatement("select ?"); p.setBoolean(1, true); return rows(p); });
        check("setBytes", () -> { PreparedStatement p = conn.prepareStatement("select ?"); p.setBytes(1, new byte[] {0, 1, (byte) 0xfe}); return rows(p); });
        check("setDate", () -> { PreparedStatement p = conn.prepareStatement("select ?"); p.setDate(1, java.sql.Date.valueOf("2000-01-01")); return rows(p); });
        check("setTimestamp", () -> { PreparedStatement p = conn.prepareStatement("select ?::timestamptz"); p.setTimestamp(1, Timestamp.valueOf("2024-07-01 12:00:00.5")); return rows(p); });
        check("setObject uuid", () -> { PreparedStatement p = conn.prepareStatement("select ?"); p.setObject(1, UUID.fromString("12345678-1234-5678-1234-567812345678")); return rows(p); });
        check("setNull", () -> { PreparedStatement p = conn.prepareStatement("select ?::int"); p.setNull(1, Types.INTEGER); return rows(p); });
        check("setArray", () -> { PreparedStatement p = conn.prepareStatement("select ?"); p.setArray(1, conn.createArrayOf("int4", new Object[] {1, 2})); return rows(p); });
        // Run one statement past prepareThreshold (5): server-side prepared.
        check("prepared repeatedly", () -> {
            List<Object> out = new ArrayList<>();
            PreparedStatement p = conn.prepareStatement("select ?::int * 2");
            for (int i = 0; i < 7; i++) { p.setInt(1, i); out.addAll(rows(p)); }
            return out;
        });

        exec("drop table if exists matrix_jdbc");
        exec("create table matrix_jdbc (id serial primary key, name varchar(20) not null unique, "
            + "amount numeric(10,2), at timestamptz, flag bool default true)");
        // Batch inserts.
        check("batch", () -> {
            PreparedStatement p = conn.prepareStatement(
                "insert into matrix_jdbc (name, amount, at) values (?, ?, ?)");
            for (int i = 1; i <= 3; i++) {
                p.setString(1, "n" + i);
                p.setBigDecimal(2, new BigDecimal(i + ".25"));
                p.setTimestamp(3, Timestamp.valueOf("2024-01-0" + i + " 10:00:00"));
                p.addBatch();
            }
            return p.executeBatch();
        });
        // Savepoints.
        conn.setAutoCommit(false);
        exec("insert into matrix_jdbc (name) values ('kept')");
        Savepoint sp = conn.setSavepoint("sp1");
        check("duplicate in savepoint", () -> { exec("insert into matrix_jdbc (name) values ('kept')"); return null; });
        check("rollback to savepoint", () -> { conn.rollback(sp); return null; });
        exec("insert into matrix_jdbc (name) values ('after')");
        conn.commit();
        conn.setAutoCommit(true);
        check("rows", () -> query("select id, name, amount, at, flag from matrix_jdbc order by id"));
        check("not null violation", () -> { exec("insert into matrix_jdbc (name) values (null)"); return null; });
        check("generated keys", () -> {
            PreparedStatement p = conn.prepareStatement(
                "insert into matrix_jdbc (name) values (?)", Statement.RETURN_GENERATED_KEYS);
            p.setString(1, "gen");
            p.executeUpdate();
            ResultSet rs = p.getGeneratedKeys();
            rs.next();
            return rs.getInt("id");
        });

        // ResultSetMetaData.
        check("metadata", () -> {
            List<Object> out = new ArrayList<>();
            try (ResultSet rs = conn.createStatement().executeQuery(
                    "select id, name, amount, at, flag, name || 'x' as expr from matrix_jdbc")) {
                ResultSetMetaData md = rs.getMetaData();
                for (int i = 1; i <= md.getColumnCount(); i++) {
                    out.add(md.getColumnName(i) + "/" + md.getColumnLabel(i) + "/"
                        + md.getColumnTypeName(i) + "/" + md.getColumnType(i) + "/"
                        + md.getPrecision(i) + "/" + md.getScale(i) + "/"
                        + md.isNullable(i) + "/" + md.getTableName(i) + "/"
                        + md.isAutoIncrement(i) + "/" + md.getColumnClassName(i));
                }
            }
            return out;
        });
        check("DatabaseMetaData.getColumns", () -> {
            List<Object> out = new ArrayList<>();
            try (ResultSet rs = conn.getMetaData().getColumns(null, "public", "matrix_jdbc", null)) {
                while (rs.next()) {
                    out.add(rs.getString("COLUMN_NAME") + "/" + rs.getString("TYPE_NAME") + "/"
                        + rs.getInt("COLUMN_SIZE") + "/" + rs.getString("IS_NULLABLE") + "/"
                        + rs.getString("COLUMN_DEF") + "/" + rs.getString("IS_AUTOINCREMENT"));
                }
            }
            return out;
        });
        check("DatabaseMetaData.getPrimaryKeys", () -> {
            List<Object> out = new ArrayList<>();
            try (ResultSet rs = conn.getMetaData().getPrimaryKeys(null, "public", "matrix_jdbc")) {
                while (rs.next()) out.add(rs.getString("COLUMN_NAME") + "/" + rs.getString("PK_NAME"));
            }
            return out;
        });
        check("DatabaseMetaData.getTables", () -> {
            List<Object> out = new ArrayList<>();
            try (ResultSet rs = conn.getMetaData().getTables(null, "public", "matrix_%", new String[] {"TABLE"})) {
                while (rs.next()) out.add(rs.getString("TABLE_NAME") + "/" + rs.getString("TABLE_TYPE"));
            }
            return out;
        });
        exec("drop table matrix_jdbc");
        conn.close();
        System.out.println("done");
    }
}
