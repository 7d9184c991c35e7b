/// The model-independent part of the server schema: bookkeeping tables, value codecs,
/// triggers, and the push and pull functions. Entity tables and their columns come from the
/// model (``SyncSchema``); these functions read the installed field list (`fields`) at run
/// time, so an install from an older model never narrows what a newer one installed.
///
/// Placeholders: `@S@` is the quoted schema name, `@SL@` the schema name as a string literal.
enum SyncServerSQL {
    /// The format these statements install; an install refuses a schema of a newer format.
    static let format = 2

    /// Custom SQLSTATEs. `CF001`: the server's schema is behind the pushing client's model
    /// (unknown entity or field): the push fails as a whole and nothing advances, so no change
    /// is lost; installing the newer model fixes it. `CF002`: a malformed change, rejected.
    /// `CF003`: mids that do not ascend. `CF004`: resync needed. `CF005`: a client id another
    /// user pushed with first. `CF006`: a trusted gateway's transaction named no user.
    /// `CF007`: an entity table forces row-level security on its owner (unsupported).
    /// `CF008`: a pull or an id listing names a scope the entity does not have.
    static let statements: [String] = [
        // Bookkeeping.
        #"""
        CREATE TABLE IF NOT EXISTS @S@.meta (key text PRIMARY KEY, value text NOT NULL)
        """#,
        #"""
        INSERT INTO @S@.meta (key, value) VALUES ('format', '\#(format)'), ('gc_floor', '0')
        ON CONFLICT (key) DO NOTHING
        """#,
        #"""
        DO $$
        BEGIN
            IF (SELECT value::integer FROM @S@.meta WHERE key = 'format') > \#(format) THEN
                RAISE EXCEPTION 'schema % was installed by a newer CofferSync (format %); this one installs format \#(format)',
                    @SL@, (SELECT value FROM @S@.meta WHERE key = 'format');
            END IF;
            -- An older installer must not put back functions this one replaced.
            UPDATE @S@.meta SET value = '\#(format)' WHERE key = 'format' AND value::integer < \#(format);
        END
        $$
        """#,
        #"""
        CREATE TABLE IF NOT EXISTS @S@.entities (entity text PRIMARY KEY)
        """#,
        #"""
        CREATE TABLE IF NOT EXISTS @S@.fields (
            entity text NOT NULL REFERENCES @S@.entities,
            field text NOT NULL,
            kind text NOT NULL,
            coffer_type text NOT NULL,
            PRIMARY KEY (entity, field)
        )
        """#,
        #"""
        CREATE TABLE IF NOT EXISTS @S@.tombstones (
            entity text NOT NULL,
            sync_id uuid NOT NULL,
            _txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
            _hlc bigint NOT NULL,
            _origin uuid,
            deleted_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (entity, sync_id)
        )
        """#,
        #"""
        CREATE INDEX IF NOT EXISTS tombstones_cursor ON @S@.tombstones (entity, _txid, sync_id)
        """#,
        #"""
        CREATE TABLE IF NOT EXISTS @S@.clients (
            client_id uuid PRIMARY KEY,
            last_mid bigint NOT NULL DEFAULT 0,
            first_seen timestamptz NOT NULL DEFAULT now(),
            last_seen timestamptz NOT NULL DEFAULT now()
        )
        """#,
        // The user a client id belongs to (``coffer_user_id()`` at its first push): another
        // user's push with it fails (CF005), so no one can advance or fill another's queue.
        #"""
        ALTER TABLE @S@.clients ADD COLUMN IF NOT EXISTS user_id text
        """#,
        #"""
        CREATE TABLE IF NOT EXISTS @S@.rejections (
            id bigserial PRIMARY KEY,
            client_id uuid NOT NULL,
            mid bigint NOT NULL,
            entity text,
            sync_id text,
            reason text NOT NULL,
            change jsonb NOT NULL,
            rejected_at timestamptz NOT NULL DEFAULT now()
        )
        """#,
        // A resent batch answers the rejections of the mids it skips from here.
        #"""
        CREATE INDEX IF NOT EXISTS rejections_client_mid ON @S@.rejections (client_id, mid)
        """#,

        // Scopes (partial replication): a named filter of an entity's rows, the predicate a
        // SQL boolean expression over the row `r` and the subscription's parameters
        // `scope.parameters` (jsonb), which a pull adds to the caller's row-level security.
        // The scope named '' is the whole table (no predicate); it only lists what moves rows
        // in or out of the caller's view. `columns` (of the entity's table) and `tables`
        // (qualified names) are what can move a row into or out of the scope without the row
        // changing itself; their triggers write `moves`.
        // An entity installed as "scopes" or "moves" before those names were reserved would
        // be taken for them: the install stops instead.
        #"""
        DO $$
        BEGIN
            IF EXISTS (SELECT 1 FROM @S@.entities e WHERE e.entity IN ('scopes', 'moves')) THEN
                RAISE EXCEPTION 'schema % holds an entity stored as "scopes" or "moves", names the sync schema now uses; store it under another name first',
                    @SL@ USING ERRCODE = '42P07';
            END IF;
        END
        $$
        """#,
        #"""
        CREATE TABLE IF NOT EXISTS @S@.scopes (
            entity text NOT NULL REFERENCES @S@.entities,
            name text NOT NULL,
            predicate text,
            columns text[] NOT NULL DEFAULT '{}',
            tables text[] NOT NULL DEFAULT '{}',
            PRIMARY KEY (entity, name)
        )
        """#,
        // A scope's wake key (coffer_define_scope): what a row's change notifies, and what a
        // subscription's waits listen for.
        #"""
        ALTER TABLE @S@.scopes ADD COLUMN IF NOT EXISTS wake_row text, ADD COLUMN IF NOT EXISTS wake_parameters text
        """#,
        // One row per transaction that may have moved rows of an entity into or out of a
        // scope (or a caller's view), stamped like rows: a pull whose span holds one says
        // "moved", and the replica compares the ids it holds with the scope's.
        #"""
        CREATE TABLE IF NOT EXISTS @S@.moves (
            entity text NOT NULL,
            _txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
            moved_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (entity, _txid)
        )
        """#,

        // The server's clock as an HLC (milliseconds << 16), for writes that carry none.
        #"""
        CREATE OR REPLACE FUNCTION @S@._server_hlc() RETURNS bigint LANGUAGE sql VOLATILE AS $$
            SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint << 16
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._bad_value(field text, expected text, value jsonb) RETURNS void
        LANGUAGE plpgsql IMMUTABLE AS $$
        BEGIN
            IF jsonb_typeof(value) = 'object' AND value ? 'nul' THEN
                RAISE EXCEPTION 'field "%": text cannot hold U+0000', field USING ERRCODE = '22P05';
            END IF;
            RAISE EXCEPTION 'field "%": expected %, got %', field, expected, left(value::text, 80)
                USING ERRCODE = '22023';
        END
        $$
        """#,

        // _bad_value for a decoder written in SQL (which needs a typed expression): raises,
        // never returns. Immutable so that the decoders calling it can be inlined.
        #"""
        CREATE OR REPLACE FUNCTION @S@._bad(field text, expected text, value jsonb, result_type anyelement) RETURNS anyelement
        LANGUAGE plpgsql IMMUTABLE AS $$
        BEGIN
            PERFORM @S@._bad_value(field, expected, value);
            RETURN NULL;
        END
        $$
        """#,

        // Decoders: a wire value (jsonb) to its column's type, refusing anything inexact
        // with a message that names the field. JSON null is SQL NULL. The common ones are
        // single SQL expressions, which the planner inlines into the statements using them.
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_bool(v jsonb, field text) RETURNS boolean
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE jsonb_typeof(v)
                WHEN 'boolean' THEN v::boolean
                WHEN 'null' THEN NULL
                ELSE @S@._bad(field, 'a boolean', v, NULL::boolean)
            END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_integer(v jsonb, field text, low numeric, high numeric) RETURNS numeric
        LANGUAGE plpgsql IMMUTABLE AS $$
        DECLARE
            n numeric;
        BEGIN
            CASE jsonb_typeof(v)
                WHEN 'null' THEN RETURN NULL;
                WHEN 'number' THEN n := v::numeric;
                WHEN 'string' THEN
                    IF (v #>> '{}') !~ '^-?[0-9]{1,20}$' THEN
                        PERFORM @S@._bad_value(field, 'an integer', v);
                    END IF;
                    n := (v #>> '{}')::numeric;
                ELSE PERFORM @S@._bad_value(field, 'an integer', v);
            END CASE;
            IF n <> trunc(n) OR n < low OR n > high THEN
                PERFORM @S@._bad_value(field, format('an integer in %s...%s', low, high), v);
            END IF;
            RETURN n;
        END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_bigint(v jsonb, field text) RETURNS bigint
        LANGUAGE sql IMMUTABLE AS $$
            -- A JSON integer of at most 18 digits is read inline (numeric tests: a regular
            -- expression per value costs more than the rest of its decoding).
            SELECT CASE WHEN jsonb_typeof(v) = 'number' AND scale(v::numeric) = 0
                             AND v::numeric BETWEEN -999999999999999999 AND 999999999999999999 THEN v::numeric::bigint
                        ELSE @S@._dec_integer(v, field, -9223372036854775808, 9223372036854775807)::bigint END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_uint64(v jsonb, field text) RETURNS numeric
        LANGUAGE sql IMMUTABLE AS $$
            SELECT @S@._dec_integer(v, field, 0, 18446744073709551615)
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_double(v jsonb, field text) RETURNS double precision
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE jsonb_typeof(v)
                -- numeric to double precision rounds correctly: the shortest decimal that
                -- round-trips a double comes back as that double.
                WHEN 'number' THEN v::double precision
                WHEN 'null' THEN NULL
                WHEN 'string' THEN CASE WHEN (v #>> '{}') IN ('NaN', 'Infinity', '-Infinity', '-0')
                    THEN (v #>> '{}')::double precision
                    ELSE @S@._bad(field, 'a number, "NaN", "Infinity", "-Infinity" or "-0"', v, NULL::double precision) END
                ELSE @S@._bad(field, 'a number', v, NULL::double precision)
            END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_text(v jsonb, field text) RETURNS text
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE jsonb_typeof(v)
                WHEN 'string' THEN v #>> '{}'
                WHEN 'null' THEN NULL
                ELSE @S@._bad(field, 'a string', v, NULL::text)
            END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_bytea(v jsonb, field text) RETURNS bytea
        LANGUAGE plpgsql IMMUTABLE AS $$
        BEGIN
            CASE jsonb_typeof(v)
                WHEN 'null' THEN RETURN NULL;
                WHEN 'string' THEN
                    IF length(v #>> '{}') % 4 = 0 AND (v #>> '{}') ~ '^[A-Za-z0-9+/]*={0,2}$' THEN
                        RETURN decode(v #>> '{}', 'base64');
                    END IF;
                    PERFORM @S@._bad_value(field, 'base64', v);
                ELSE PERFORM @S@._bad_value(field, 'a base64 string', v);
            END CASE;
            RETURN NULL;
        END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_uuid(v jsonb, field text) RETURNS uuid
        LANGUAGE plpgsql IMMUTABLE AS $$
        BEGIN
            CASE jsonb_typeof(v)
                WHEN 'null' THEN RETURN NULL;
                WHEN 'string' THEN
                    IF (v #>> '{}') ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN
                        RETURN (v #>> '{}')::uuid;
                    END IF;
                    PERFORM @S@._bad_value(field, 'a UUID', v);
                ELSE PERFORM @S@._bad_value(field, 'a UUID string', v);
            END CASE;
            RETURN NULL;
        END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_jsonb(v jsonb, field text) RETURNS jsonb
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN jsonb_typeof(v) = 'null' THEN NULL ELSE v END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._elements(v jsonb, field text) RETURNS SETOF jsonb
        LANGUAGE plpgsql IMMUTABLE AS $$
        BEGIN
            IF jsonb_typeof(v) <> 'array' THEN
                PERFORM @S@._bad_value(field, 'an array', v);
            END IF;
            IF EXISTS (SELECT 1 FROM jsonb_array_elements(v) e WHERE jsonb_typeof(e) = 'null') THEN
                PERFORM @S@._bad_value(field, 'an array without nulls', v);
            END IF;
            RETURN QUERY SELECT e FROM jsonb_array_elements(v) WITH ORDINALITY AS t(e, i) ORDER BY i;
        END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_bool_array(v jsonb, field text) RETURNS boolean[]
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN jsonb_typeof(v) = 'null' THEN NULL ELSE
                ARRAY(SELECT @S@._dec_bool(e, field) FROM @S@._elements(v, field) e) END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_bigint_array(v jsonb, field text) RETURNS bigint[]
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN jsonb_typeof(v) = 'null' THEN NULL ELSE
                ARRAY(SELECT @S@._dec_bigint(e, field) FROM @S@._elements(v, field) e) END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_uint64_array(v jsonb, field text) RETURNS numeric[]
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN jsonb_typeof(v) = 'null' THEN NULL ELSE
                ARRAY(SELECT @S@._dec_uint64(e, field) FROM @S@._elements(v, field) e) END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_double_array(v jsonb, field text) RETURNS double precision[]
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN jsonb_typeof(v) = 'null' THEN NULL ELSE
                ARRAY(SELECT @S@._dec_double(e, field) FROM @S@._elements(v, field) e) END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_text_array(v jsonb, field text) RETURNS text[]
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN jsonb_typeof(v) = 'null' THEN NULL ELSE
                ARRAY(SELECT @S@._dec_text(e, field) FROM @S@._elements(v, field) e) END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._dec_uuid_array(v jsonb, field text) RETURNS uuid[]
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN jsonb_typeof(v) = 'null' THEN NULL ELSE
                ARRAY(SELECT @S@._dec_uuid(e, field) FROM @S@._elements(v, field) e) END
        $$
        """#,

        // Encoders: a column's value to its wire form (the inverse of the decoders). The
        // double ones are stable, as the text of a double is (it follows extra_float_digits):
        // declared immutable they would not be inlined into the pull's query, and a call per
        // value would cost more than the rest of the row.
        #"""
        CREATE OR REPLACE FUNCTION @S@._enc_double(d double precision) RETURNS jsonb
        LANGUAGE sql STABLE AS $$
            SELECT CASE
                WHEN d IS NULL THEN 'null'::jsonb
                WHEN d = 'NaN'::double precision OR d = 'Infinity'::double precision
                    OR d = '-Infinity'::double precision THEN to_jsonb(d::text)
                WHEN d = 0 AND d::text = '-0' THEN '"-0"'::jsonb
                ELSE to_jsonb(d)
            END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._enc_uint64(n numeric) RETURNS jsonb
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN n IS NULL THEN 'null'::jsonb ELSE to_jsonb(n::text) END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._enc_bytea(b bytea) RETURNS jsonb
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN b IS NULL THEN 'null'::jsonb
                ELSE to_jsonb(translate(encode(b, 'base64'), E'\n', '')) END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._enc_double_array(a double precision[]) RETURNS jsonb
        LANGUAGE sql STABLE AS $$
            SELECT CASE WHEN a IS NULL THEN 'null'::jsonb ELSE coalesce(
                (SELECT jsonb_agg(@S@._enc_double(e) ORDER BY i) FROM unnest(a) WITH ORDINALITY AS t(e, i)),
                '[]'::jsonb) END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._enc_uint64_array(a numeric[]) RETURNS jsonb
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN a IS NULL THEN 'null'::jsonb ELSE coalesce(
                (SELECT jsonb_agg(e::text ORDER BY i) FROM unnest(a) WITH ORDINALITY AS t(e, i)),
                '[]'::jsonb) END
        $$
        """#,

        // The SQL expression that encodes a column of a kind (used to build pull queries).
        #"""
        CREATE OR REPLACE FUNCTION @S@._encoder(kind text, col text) RETURNS text
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE kind
                WHEN 'double' THEN format('%s._enc_double(%I)', quote_ident(@SL@), col)
                WHEN 'double[]' THEN format('%s._enc_double_array(%I)', quote_ident(@SL@), col)
                WHEN 'uint64' THEN format('%s._enc_uint64(%I)', quote_ident(@SL@), col)
                WHEN 'uint64[]' THEN format('%s._enc_uint64_array(%I)', quote_ident(@SL@), col)
                WHEN 'bytea' THEN format('%s._enc_bytea(%I)', quote_ident(@SL@), col)
                ELSE format('coalesce(to_jsonb(%I), ''null''::jsonb)', col)
            END
        $$
        """#,
        // The SQL expression that sizes column `col` of a row in a pull page without reading
        // its value: text and bytea by their length (a toasted value's length is in its
        // pointer; bytea travels as base64), jsonb and arrays by their stored size (arrays of
        // numbers, booleans and uuids grow about threefold as JSON); NULL for the kinds of a
        // fixed size, which the page counts as a constant.
        #"""
        CREATE OR REPLACE FUNCTION @S@._sizer(kind text, col text) RETURNS text
        LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE
                WHEN kind = 'text' THEN format('coalesce(octet_length(%I)::bigint, 0)', col)
                WHEN kind = 'bytea' THEN format('coalesce((octet_length(%I)::bigint + 2) / 3 * 4, 0)', col)
                WHEN kind IN ('jsonb', 'text[]') THEN format('coalesce(pg_column_size(%I)::bigint, 0)', col)
                WHEN kind LIKE '%[]' THEN format('coalesce(pg_column_size(%I)::bigint * 3, 0)', col)
            END
        $$
        """#,
        // The largest row a pull or a fetch sends, in bytes as the page sizes rows: 64 MiB,
        // as the largest change a push sends. A larger row goes as a marker (`"op":
        // "oversized"`). The meta key 'largest_row' lowers it (tests), never raises it.
        #"""
        CREATE OR REPLACE FUNCTION @S@._largest_row() RETURNS bigint
        LANGUAGE sql STABLE AS $$
            SELECT least(coalesce((SELECT m.value::bigint FROM @S@.meta m WHERE m.key = 'largest_row'), 67108864), 67108864)
        $$
        """#,

        // The SQL expression that decodes field `field` of the jsonb `$1` into its kind.
        #"""
        CREATE OR REPLACE FUNCTION @S@._decoder(kind text, field text) RETURNS text
        LANGUAGE sql IMMUTABLE AS $$
            SELECT format('%s.%I($1 -> %L, %L)', quote_ident(@SL@),
                '_dec_' || replace(kind, '[]', '_array'), field, field)
        $$
        """#,
        // The same over the jsonb expression `source`.
        #"""
        CREATE OR REPLACE FUNCTION @S@._decoder_of(kind text, field text, source text) RETURNS text
        LANGUAGE sql IMMUTABLE AS $$
            SELECT format('%s.%I(%s -> %L, %L)', quote_ident(@SL@),
                '_dec_' || replace(kind, '[]', '_array'), source, field, field)
        $$
        """#,

        // Installs one field of an entity: registers it, refuses a changed kind, adds the
        // column if it is not there. Never drops or alters an existing column.
        #"""
        CREATE OR REPLACE FUNCTION @S@._install_field(entity text, field text, kind text, coffer_type text, column_type text)
        RETURNS void LANGUAGE plpgsql AS $$
        DECLARE
            installed text;
        BEGIN
            SELECT f.kind INTO installed FROM @S@.fields f WHERE f.entity = _install_field.entity AND f.field = _install_field.field;
            IF FOUND AND installed <> kind THEN
                RAISE EXCEPTION 'field %.% is % on the server but % in this model: a column never changes type; rename the property',
                    entity, field, installed, kind;
            END IF;
            INSERT INTO @S@.fields (entity, field, kind, coffer_type) VALUES (entity, field, kind, coffer_type)
                ON CONFLICT DO NOTHING;
            IF NOT EXISTS (SELECT 1 FROM information_schema.columns c
                           WHERE c.table_schema = @SL@ AND c.table_name = entity AND c.column_name = field) THEN
                EXECUTE format('ALTER TABLE %I.%I ADD COLUMN %I %s', @SL@, entity, field, column_type);
            END IF;
        END
        $$
        """#,

        // Triggers. Every insert and update is stamped with its transaction id, so pulls see
        // plain-SQL writes too; a plain-SQL write also gets the server's HLC on each field it
        // changed (a push sets the clocks itself and marks itself with coffer.origin).
        // The tombstone trigger runs as the schema's owner (SECURITY DEFINER, a fixed
        // search_path): it keeps the tombstones, which the roles that write entity tables may
        // read but not change. It refuses to run on a table outside the schema, and no role but
        // the owner may attach it anywhere (EXECUTE is revoked from PUBLIC below; triggers fire
        // without it). The stamp trigger runs as the caller.
        #"""
        CREATE OR REPLACE FUNCTION @S@._stamp() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            hlc bigint;
            changed jsonb;
            before jsonb;
            clocks jsonb;
            k text;
            v jsonb;
        BEGIN
            NEW._txid := pg_current_xact_id();
            IF TG_OP = 'UPDATE' AND NEW.sync_id IS DISTINCT FROM OLD.sync_id THEN
                RAISE EXCEPTION 'sync_id of %.% cannot change (delete the row and insert a new one)',
                    TG_TABLE_SCHEMA, TG_TABLE_NAME;
            END IF;
            IF coalesce(current_setting('coffer.origin', true), '') = '' THEN
                hlc := @S@._server_hlc();
                changed := to_jsonb(NEW) - ARRAY['sync_id', '_txid', '_hlc', '_origin', '_clocks'];
                IF TG_OP = 'UPDATE' THEN
                    before := to_jsonb(OLD);
                    clocks := coalesce(OLD._clocks, '{}');
                ELSE
                    before := '{}';
                    clocks := '{}';
                END IF;
                -- Each changed field's clock follows the clock of the write it overwrites
                -- (which a client up to five minutes fast may have set ahead of the server's),
                -- so a plain-SQL write wins over every write it saw.
                FOR k, v IN SELECT * FROM jsonb_each(changed) LOOP
                    IF v IS DISTINCT FROM coalesce(before -> k, 'null'::jsonb) THEN
                        clocks := clocks || jsonb_build_object(k, jsonb_build_array(
                            greatest(hlc, coalesce((clocks -> k ->> 0)::bigint + 1, 0)),
                            '00000000-0000-0000-0000-000000000000'));
                    END IF;
                END LOOP;
                NEW._clocks := clocks;
                NEW._hlc := greatest(hlc, CASE WHEN TG_OP = 'UPDATE' THEN OLD._hlc + 1 END,
                                     (SELECT max((c.value ->> 0)::bigint) FROM jsonb_each(clocks) c));
                NEW._origin := NULL;
                -- A plain-SQL insert brings a deleted object back: its tombstone goes. (A push
                -- never inserts an object it sees a tombstone of: it rejects that change.)
                -- TG_TABLE_NAME is a name (collation "C"): compared as it is, the primary key
                -- cannot serve the lookup, which would scan every tombstone.
                -- Only a role that may delete tombstones (the schema's owner) can: for a role
                -- granted with coffer_grant, such an insert fails (42501).
                IF TG_OP = 'INSERT' AND EXISTS (SELECT 1 FROM @S@.tombstones t
                        WHERE t.entity = (TG_TABLE_NAME::text COLLATE "default") AND t.sync_id = NEW.sync_id) THEN
                    DELETE FROM @S@.tombstones t
                    WHERE t.entity = (TG_TABLE_NAME::text COLLATE "default") AND t.sync_id = NEW.sync_id;
                END IF;
            END IF;
            RETURN NEW;
        END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._tombstone() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        BEGIN
            IF TG_TABLE_SCHEMA <> @SL@ THEN
                RAISE EXCEPTION 'the tombstone trigger of schema % does not serve %.%', @SL@, TG_TABLE_SCHEMA, TG_TABLE_NAME
                    USING ERRCODE = '42501';
            END IF;
            INSERT INTO @S@.tombstones AS t (entity, sync_id, _txid, _hlc, _origin)
            VALUES (TG_TABLE_NAME, OLD.sync_id, pg_current_xact_id(),
                    coalesce(nullif(current_setting('coffer.hlc', true), '')::bigint, @S@._server_hlc()),
                    nullif(current_setting('coffer.origin', true), '')::uuid)
            ON CONFLICT (entity, sync_id) DO UPDATE
                SET _txid = EXCLUDED._txid, _hlc = EXCLUDED._hlc, _origin = EXCLUDED._origin, deleted_at = now();
            RETURN OLD;
        END
        $$
        """#,
        #"""
        REVOKE EXECUTE ON FUNCTION @S@._tombstone(), @S@._stamp() FROM PUBLIC
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._refuse_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'TRUNCATE of %.% would not reach the replicas: use DELETE', TG_TABLE_SCHEMA, TG_TABLE_NAME;
        END
        $$
        """#,

        // A move: the trigger of a watched column or table (coffer_define_scope) records that
        // the transaction may have moved rows of the entity TG_ARGV[0] into or out of scopes,
        // and wakes the replicas. Runs as the schema's owner (the writers of a watched table
        // cannot write `moves`); only the owner may attach it (EXECUTE revoked from PUBLIC).
        #"""
        CREATE OR REPLACE FUNCTION @S@._moved() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        BEGIN
            INSERT INTO @S@.moves (entity, _txid) VALUES (TG_ARGV[0], pg_current_xact_id()) ON CONFLICT DO NOTHING;
            PERFORM pg_notify(@SL@ || '_changes', TG_ARGV[0]);
            RETURN NULL;
        END
        $$
        """#,
        #"""
        REVOKE EXECUTE ON FUNCTION @S@._moved() FROM PUBLIC
        """#,

        // Wake-ups, on channel `<schema>_changes`; PostgreSQL delivers them at commit, once
        // per distinct payload. A payload names what changed:
        // - `<entity>/`: rows of the entity changed (every statement that writes its table,
        //   a push or plain SQL, and every tombstone left or renewed). Wakes the replicas
        //   that pull the whole table or a scope without a wake key.
        // - `<entity>/<hash>`: rows with that wake key of a scope changed (_wake_key); the
        //   scope's subscribers with that key wake.
        // - `<entity>`: anything of the entity may have changed (a move, a scope dropped or
        //   redefined): every replica that pulls it wakes.
        // A waiter that names no keys wakes for every payload.
        #"""
        CREATE OR REPLACE FUNCTION @S@._notify() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify(TG_TABLE_SCHEMA || '_changes', TG_TABLE_NAME || '/');
            RETURN NULL;
        END
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._notify_tombstone() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify(TG_TABLE_SCHEMA || '_changes', NEW.entity || '/');
            RETURN NULL;
        END
        $$
        """#,
        #"""
        CREATE OR REPLACE TRIGGER coffer_notify AFTER INSERT OR UPDATE ON @S@.tombstones
        FOR EACH ROW EXECUTE FUNCTION @S@._notify_tombstone()
        """#,
        // The wake key of the value `wake_value` of the scope `scope_name` of `entity_name`:
        // the same for a row (its wake_row expression) and a subscription (its wake_parameters
        // expression) when the two values are equal, NULL included. Hashed, so that a payload
        // stays short whatever the value.
        #"""
        CREATE OR REPLACE FUNCTION @S@._wake_key(entity_name text, scope_name text, wake_value text) RETURNS text
        LANGUAGE sql IMMUTABLE AS $$
            SELECT entity_name || '/' || md5(scope_name || chr(10) || coalesce('v' || wake_value, 'n'))
        $$
        """#,
        // The statement triggers of a scope with a wake key (coffer_define_scope): notify the
        // key of each row written, before and after (a row that leaves a key wakes its old
        // subscribers too). TG_ARGV: the scope's name and its wake_row expression over `r`.
        // A statement that touches more than 1000 keys notifies the entity instead.
        #"""
        CREATE OR REPLACE FUNCTION @S@._notify_wakes() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            source_rows text := CASE TG_OP WHEN 'INSERT' THEN 'SELECT * FROM coffer_new_rows'
                                           WHEN 'DELETE' THEN 'SELECT * FROM coffer_old_rows'
                                           ELSE 'SELECT * FROM coffer_new_rows UNION ALL SELECT * FROM coffer_old_rows' END;
            keys text[];
            wake_key text;
        BEGIN
            EXECUTE format('SELECT array_agg(k) FROM (SELECT DISTINCT %I._wake_key(%L, %L, (%s)::text) AS k FROM (%s) r LIMIT 1001) keys',
                           TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_ARGV[0], TG_ARGV[1], source_rows) INTO keys;
            IF cardinality(keys) > 1000 THEN
                PERFORM pg_notify(TG_TABLE_SCHEMA || '_changes', TG_TABLE_NAME);
            ELSE
                FOREACH wake_key IN ARRAY coalesce(keys, '{}') LOOP
                    PERFORM pg_notify(TG_TABLE_SCHEMA || '_changes', wake_key);
                END LOOP;
            END IF;
            RETURN NULL;
        END
        $$
        """#,

        // Tombstone collection: removes tombstones older than `retention` and raises
        // meta.gc_floor past the newest one removed, so that a pull from a cursor below it
        // (which may have missed a removed tombstone) fails with CF004 and the replica
        // resyncs. Returns {"removed": n, "floor": "<xid8>"}.
        #"""
        CREATE OR REPLACE FUNCTION @S@.coffer_gc(retention interval) RETURNS jsonb
        LANGUAGE plpgsql AS $$
        DECLARE
            current_floor xid8;
            removed bigint;
            newest xid8;
        BEGIN
            IF retention IS NULL OR retention < interval '0' THEN
                RAISE EXCEPTION 'coffer_gc needs a retention of zero or more, e.g. interval ''30 days''';
            END IF;
            -- Collections run one at a time (the floor only rises).
            SELECT value::xid8 INTO current_floor FROM @S@.meta WHERE key = 'gc_floor' FOR UPDATE;
            WITH gone AS (DELETE FROM @S@.tombstones t WHERE t.deleted_at < now() - retention RETURNING t._txid)
            SELECT count(*), max(gone._txid) INTO removed, newest FROM gone;
            -- Moves go with the same retention and raise the floor the same way: a replica
            -- that had not pulled past a removed move resyncs, which compares its ids again.
            WITH gone AS (DELETE FROM @S@.moves mv WHERE mv.moved_at < now() - retention RETURNING mv._txid)
            SELECT greatest(newest, max(gone._txid)) INTO newest FROM gone;
            IF newest IS NOT NULL AND (newest::text::numeric + 1) > current_floor::text::numeric THEN
                current_floor := (newest::text::numeric + 1)::text::xid8;
                UPDATE @S@.meta SET value = current_floor::text WHERE key = 'gc_floor';
            END IF;
            RETURN jsonb_build_object('removed', removed, 'floor', current_floor::text);
        END
        $$
        """#,

        // What `coffer sync status` shows: per entity its rows and tombstones, per client its
        // last mid and rejections, the collection floor.
        #"""
        CREATE OR REPLACE FUNCTION @S@.coffer_status() RETURNS jsonb
        LANGUAGE plpgsql STABLE AS $$
        DECLARE
            entity_name text;
            live bigint;
            entities jsonb := '[]';
        BEGIN
            FOR entity_name IN SELECT e.entity FROM @S@.entities e ORDER BY e.entity LOOP
                EXECUTE format('SELECT count(*) FROM %I.%I', @SL@, entity_name) INTO live;
                entities := entities || jsonb_build_array(jsonb_build_object(
                    'entity', entity_name, 'rows', live,
                    'tombstones', (SELECT count(*) FROM @S@.tombstones t WHERE t.entity = entity_name),
                    'oldestTombstone', (SELECT min(t.deleted_at) FROM @S@.tombstones t WHERE t.entity = entity_name)));
            END LOOP;
            RETURN jsonb_build_object(
                'format', (SELECT m.value FROM @S@.meta m WHERE m.key = 'format'),
                'gcFloor', (SELECT m.value FROM @S@.meta m WHERE m.key = 'gc_floor'),
                'entities', entities,
                'clients', coalesce((SELECT jsonb_agg(jsonb_build_object(
                        'client', c.client_id, 'lastMid', c.last_mid, 'firstSeen', c.first_seen, 'lastSeen', c.last_seen,
                        'rejections', (SELECT count(*) FROM @S@.rejections r WHERE r.client_id = c.client_id))
                    ORDER BY c.last_seen DESC, c.client_id) FROM @S@.clients c), '[]'),
                'rejections', (SELECT count(*) FROM @S@.rejections));
        END
        $$
        """#,

        // Sharing. Who calls: the user id a trusted gateway set for its transaction
        // (`SET LOCAL coffer.user_id`), when the session logged in as a member of the role
        // `coffer_trust_gateway` named; otherwise the session's login role. A role that is not
        // a trusted gateway cannot name another user by setting coffer.user_id (any role may
        // set a custom setting); a trusted gateway that names no one fails with CF006, which
        // fails a push as a whole instead of rejecting its changes (not class 28: postgres-nio
        // closes the connection on that class, and a gateway's connections are pooled). Policies call it:
        // `USING (owner = coffer.coffer_user_id())`.
        #"""
        CREATE OR REPLACE FUNCTION @S@.coffer_user_id() RETURNS text
        LANGUAGE plpgsql STABLE AS $$
        DECLARE
            gateway text := (SELECT m.value FROM @S@.meta m WHERE m.key = 'gateway_role');
            named text;
        BEGIN
            IF gateway IS NOT NULL AND EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.rolname = gateway)
               AND pg_catalog.pg_has_role(session_user, gateway, 'MEMBER')
               AND NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = session_user) THEN
                named := nullif(current_setting('coffer.user_id', true), '');
                IF named IS NULL THEN
                    RAISE EXCEPTION 'the gateway session of % named no user (SET LOCAL coffer.user_id)', session_user
                        USING ERRCODE = 'CF006';
                END IF;
                RETURN named;
            END IF;
            RETURN session_user::text;
        END
        $$
        """#,

        // Makes the members of `gateway` trusted gateways (NULL: none). Only the schema's
        // owner may: the setting lives in meta, which other roles only read.
        #"""
        CREATE OR REPLACE FUNCTION @S@.coffer_trust_gateway(gateway text) RETURNS void
        LANGUAGE plpgsql AS $$
        BEGIN
            IF gateway IS NULL THEN
                DELETE FROM @S@.meta WHERE key = 'gateway_role';
            ELSIF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.rolname = gateway) THEN
                RAISE EXCEPTION 'role "%" does not exist', gateway USING ERRCODE = '42704';
            ELSE
                INSERT INTO @S@.meta (key, value) VALUES ('gateway_role', gateway)
                ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value;
            END IF;
        END
        $$
        """#,

        // Lets `grantee` sync: use the schema, read the bookkeeping a pull reads (the field
        // list, the collection floor, tombstones), and read and write every entity table,
        // within the tables' row-level security. Clients, rejections and tombstones are
        // written only by the sync functions (SECURITY DEFINER, below), which check whose
        // client it is. The grantee is recorded, and every later install grants it the
        // tables it adds. Only the schema's owner may grant.
        #"""
        CREATE OR REPLACE FUNCTION @S@.coffer_grant(grantee text) RETURNS void
        LANGUAGE plpgsql AS $$
        DECLARE
            entity_name text;
        BEGIN
            IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.rolname = grantee) THEN
                RAISE EXCEPTION 'role "%" does not exist', grantee USING ERRCODE = '42704';
            END IF;
            IF NOT pg_catalog.pg_has_role(current_user, (SELECT n.nspowner FROM pg_catalog.pg_namespace n WHERE n.nspname = @SL@), 'USAGE') THEN
                RAISE EXCEPTION 'only the owner of schema % may grant its use', @SL@ USING ERRCODE = '42501';
            END IF;
            EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', @SL@, grantee);
            EXECUTE format('GRANT SELECT ON %1$I.meta, %1$I.entities, %1$I.fields, %1$I.tombstones, %1$I.scopes, %1$I.moves TO %2$I',
                           @SL@, grantee);
            FOR entity_name IN SELECT e.entity FROM @S@.entities e ORDER BY e.entity LOOP
                EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I.%I TO %I', @SL@, entity_name, grantee);
            END LOOP;
            INSERT INTO @S@.meta (key, value) VALUES ('grantee:' || grantee, 'sync') ON CONFLICT (key) DO NOTHING;
        END
        $$
        """#,

        // The predicate of the scope `scope_name` of `entity_name`, as the caller reads the
        // scopes; CF008 when the entity has no such scope (or it is the whole table, which
        // has none). What a pull and an id listing add to their queries.
        #"""
        CREATE OR REPLACE FUNCTION @S@._scope_predicate(entity_name text, scope_name text) RETURNS text
        LANGUAGE plpgsql STABLE AS $$
        DECLARE
            found_predicate text;
        BEGIN
            SELECT s.predicate INTO found_predicate FROM @S@.scopes s WHERE s.entity = entity_name AND s.name = scope_name;
            IF found_predicate IS NULL THEN
                RAISE EXCEPTION 'entity "%" has no scope "%" in schema %', entity_name, scope_name, @SL@ USING ERRCODE = 'CF008';
            END IF;
            RETURN found_predicate;
        END
        $$
        """#,
        // Defines (or redefines) the scope `scope_name` of `entity_name`: `predicate` filters
        // the rows its subscribers pull (NULL for the whole-table scope ''), `watched_columns`
        // (of the entity's table) and `watched_tables` (any tables, e.g. a membership table the
        // predicate or a policy reads) get triggers that record a move whenever they change.
        // The predicate is planned once here, so a syntax error or an unknown column fails the
        // definition instead of every pull. Only roles that may create triggers on the watched
        // tables (the owner) can define scopes.
        // A wake key narrows the scope's wake-ups: `wake_row_expression` (over `r`) and
        // `wake_parameters_expression` (over `scope.parameters`) give, as text, the value that
        // ties a row to a subscription: equal for every row the predicate lets through. A
        // write then wakes only the subscribers of its rows' keys (before and after), where
        // otherwise every subscriber of the entity wakes. Both or neither; not for ''.
        #"""
        DROP FUNCTION IF EXISTS @S@.coffer_define_scope(text, text, text, text[], text[])
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@.coffer_define_scope(entity_name text, scope_name text, predicate text,
                                                          watched_columns text[], watched_tables text[],
                                                          wake_row_expression text DEFAULT NULL,
                                                          wake_parameters_expression text DEFAULT NULL) RETURNS void
        LANGUAGE plpgsql AS $$
        DECLARE
            suffix text := substr(md5(length(entity_name) || ':' || entity_name || '/' || coalesce(scope_name, '')), 1, 16);
            column_name text;
            condition text := '';
            watched text;
            qualified text;
            resolved text[] := '{}';
        BEGIN
            IF NOT EXISTS (SELECT 1 FROM @S@.entities e WHERE e.entity = entity_name) THEN
                RAISE EXCEPTION 'entity "%" is not installed in schema %', entity_name, @SL@ USING ERRCODE = 'CF001';
            END IF;
            IF scope_name IS NULL OR (scope_name = '') <> (predicate IS NULL) THEN
                RAISE EXCEPTION 'scope "%" of %: the whole-table scope (named by the empty string) takes no predicate, and every other scope needs one',
                    scope_name, entity_name USING ERRCODE = '22023';
            END IF;
            IF predicate IS NOT NULL THEN
                EXECUTE format('SELECT 1 FROM %I.%I r WHERE EXISTS (SELECT 1 FROM (SELECT NULL::jsonb AS parameters) scope WHERE (%s)) LIMIT 0',
                               @SL@, entity_name, predicate);
            END IF;
            IF (wake_row_expression IS NULL) <> (wake_parameters_expression IS NULL)
               OR (wake_row_expression IS NOT NULL AND scope_name = '') THEN
                RAISE EXCEPTION 'scope "%" of %: a wake key needs both expressions, the row''s and the parameters'', and the whole-table scope takes none',
                    scope_name, entity_name USING ERRCODE = '22023';
            END IF;
            IF wake_row_expression IS NOT NULL THEN
                EXECUTE format('SELECT (%s)::text FROM %I.%I r LIMIT 0', wake_row_expression, @SL@, entity_name);
                EXECUTE format('SELECT (%s)::text FROM (SELECT NULL::jsonb AS parameters) scope LIMIT 0', wake_parameters_expression);
            END IF;
            FOREACH watched IN ARRAY coalesce(watched_tables, '{}') LOOP
                SELECT format('%I.%I', n.nspname, c.relname) INTO qualified
                FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                WHERE c.oid = watched::regclass;
                IF NOT qualified = ANY(resolved) THEN
                    resolved := resolved || qualified;
                END IF;
            END LOOP;
            -- The same definition again (every install repeats it): nothing changes, and
            -- nothing moves.
            IF EXISTS (SELECT 1 FROM @S@.scopes s WHERE s.entity = entity_name AND s.name = scope_name
                       AND s.predicate IS NOT DISTINCT FROM coffer_define_scope.predicate AND s.columns = coalesce(watched_columns, '{}')
                       AND s.tables = resolved AND s.wake_row IS NOT DISTINCT FROM wake_row_expression
                       AND s.wake_parameters IS NOT DISTINCT FROM wake_parameters_expression) THEN
                RETURN;
            END IF;
            -- A changed definition moves rows in and out of the scope: dropping the old one
            -- records a move, so its subscribers compare.
            PERFORM @S@.coffer_drop_scope(entity_name, scope_name);
            FOREACH column_name IN ARRAY coalesce(watched_columns, '{}') LOOP
                IF NOT EXISTS (SELECT 1 FROM @S@.fields f WHERE f.entity = entity_name AND f.field = column_name) THEN
                    RAISE EXCEPTION 'entity "%" has no field "%" to watch', entity_name, column_name USING ERRCODE = '42703';
                END IF;
                condition := condition || CASE WHEN condition = '' THEN '' ELSE ' OR ' END
                             || format('OLD.%1$I IS DISTINCT FROM NEW.%1$I', column_name);
            END LOOP;
            IF condition <> '' THEN
                EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON %I.%I FOR EACH ROW WHEN (%s) EXECUTE FUNCTION %I._moved(%L)',
                               '_coffer_moves_' || suffix, @SL@, entity_name, condition, @SL@, entity_name);
            END IF;
            FOREACH qualified IN ARRAY resolved LOOP
                EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION %I._moved(%L)',
                               '_coffer_movet_' || suffix, qualified, @SL@, entity_name);
            END LOOP;
            IF wake_row_expression IS NOT NULL THEN
                EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %I.%I REFERENCING NEW TABLE AS coffer_new_rows '
                               'FOR EACH STATEMENT EXECUTE FUNCTION %I._notify_wakes(%L, %L)',
                               '_coffer_wakei_' || suffix, @SL@, entity_name, @SL@, scope_name, wake_row_expression);
                EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON %I.%I REFERENCING NEW TABLE AS coffer_new_rows OLD TABLE AS coffer_old_rows '
                               'FOR EACH STATEMENT EXECUTE FUNCTION %I._notify_wakes(%L, %L)',
                               '_coffer_wakeu_' || suffix, @SL@, entity_name, @SL@, scope_name, wake_row_expression);
                EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON %I.%I REFERENCING OLD TABLE AS coffer_old_rows '
                               'FOR EACH STATEMENT EXECUTE FUNCTION %I._notify_wakes(%L, %L)',
                               '_coffer_waked_' || suffix, @SL@, entity_name, @SL@, scope_name, wake_row_expression);
            END IF;
            INSERT INTO @S@.scopes (entity, name, predicate, columns, tables, wake_row, wake_parameters)
            VALUES (entity_name, scope_name, predicate, coalesce(watched_columns, '{}'), resolved,
                    wake_row_expression, wake_parameters_expression);
        END
        $$
        """#,
        // Drops a scope and its triggers (nothing when it does not exist), recording a move of
        // the entity. A replica that still pulls it fails with CF008 until it unsubscribes.
        #"""
        CREATE OR REPLACE FUNCTION @S@.coffer_drop_scope(entity_name text, scope_name text) RETURNS void
        LANGUAGE plpgsql AS $$
        DECLARE
            suffix text := substr(md5(length(entity_name) || ':' || entity_name || '/' || coalesce(scope_name, '')), 1, 16);
            old_tables text[];
            watched text;
        BEGIN
            SELECT s.tables INTO old_tables FROM @S@.scopes s WHERE s.entity = entity_name AND s.name = scope_name;
            IF NOT FOUND THEN
                RETURN;
            END IF;
            EXECUTE format('DROP TRIGGER IF EXISTS %I ON %I.%I', '_coffer_moves_' || suffix, @SL@, entity_name);
            EXECUTE format('DROP TRIGGER IF EXISTS %I ON %I.%I', '_coffer_wakei_' || suffix, @SL@, entity_name);
            EXECUTE format('DROP TRIGGER IF EXISTS %I ON %I.%I', '_coffer_wakeu_' || suffix, @SL@, entity_name);
            EXECUTE format('DROP TRIGGER IF EXISTS %I ON %I.%I', '_coffer_waked_' || suffix, @SL@, entity_name);
            FOREACH watched IN ARRAY old_tables LOOP
                IF to_regclass(watched) IS NOT NULL THEN
                    EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', '_coffer_movet_' || suffix, watched);
                END IF;
            END LOOP;
            DELETE FROM @S@.scopes s WHERE s.entity = entity_name AND s.name = scope_name;
            -- Its rows may leave (or enter, when it is defined again differently).
            INSERT INTO @S@.moves (entity, _txid) VALUES (entity_name, pg_current_xact_id()) ON CONFLICT DO NOTHING;
            PERFORM pg_notify(@SL@ || '_changes', entity_name);
        END
        $$
        """#,

        // A push's claim of its client id: registers it for the caller at its first push,
        // refuses it (CF005) when it belongs to another user, and returns the last mid
        // applied, the row locked until the push commits. Runs as the schema's owner (roles
        // that sync cannot write `clients`); safe to call directly, since it only ever
        // registers the caller's own client.
        #"""
        CREATE OR REPLACE FUNCTION @S@._claim_client(client uuid) RETURNS bigint
        LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            caller text := @S@.coffer_user_id();
            owner_id text;
            applied bigint;
        BEGIN
            INSERT INTO @S@.clients (client_id, user_id) VALUES (client, caller) ON CONFLICT DO NOTHING;
            SELECT c.last_mid, c.user_id INTO applied, owner_id FROM @S@.clients c WHERE c.client_id = client FOR UPDATE;
            IF owner_id IS NULL THEN
                -- Registered before clients had users, when only trusted replicas pushed: a
                -- role with the schema owner's rights takes it; no one else may (client ids
                -- are not secret: tombstones and rows carry them as origins).
                IF NOT pg_has_role(session_user, (SELECT n.nspowner FROM pg_namespace n WHERE n.nspname = @SL@), 'MEMBER') THEN
                    RAISE EXCEPTION 'client % was registered before clients had users; only the schema owner''s roles may push with it', client
                        USING ERRCODE = 'CF005';
                END IF;
                UPDATE @S@.clients c SET user_id = caller WHERE c.client_id = client;
            ELSIF owner_id <> caller THEN
                RAISE EXCEPTION 'client % belongs to another user than %', client, caller USING ERRCODE = 'CF005';
            END IF;
            RETURN applied;
        END
        $$
        """#,

        // The last mid applied of the caller's client (0 for a client the server never saw),
        // which a replica checks before it pushes under a client id; CF005 for another user's.
        // Runs as the schema's owner: the roles that sync cannot read `clients`.
        #"""
        CREATE OR REPLACE FUNCTION @S@.coffer_last_mid(client uuid) RETURNS bigint
        LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            owner_id text;
            applied bigint;
        BEGIN
            SELECT c.last_mid, c.user_id INTO applied, owner_id FROM @S@.clients c WHERE c.client_id = client;
            IF owner_id IS NOT NULL AND owner_id <> @S@.coffer_user_id() THEN
                RAISE EXCEPTION 'client % belongs to another user than %', client, @S@.coffer_user_id() USING ERRCODE = 'CF005';
            END IF;
            RETURN coalesce(applied, 0);
        END
        $$
        """#,

        // The end of a push: records its rejections (with the changes from `batch`) and the
        // client's last mid. Runs as the schema's owner; refuses (CF005) a client that is not
        // the caller's.
        #"""
        CREATE OR REPLACE FUNCTION @S@._finish_push(client uuid, applied_mid bigint, rejected jsonb, batch jsonb) RETURNS void
        LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        BEGIN
            IF NOT EXISTS (SELECT 1 FROM @S@.clients c WHERE c.client_id = client AND c.user_id = @S@.coffer_user_id()) THEN
                RAISE EXCEPTION 'client % belongs to another user than %', client, @S@.coffer_user_id() USING ERRCODE = 'CF005';
            END IF;
            IF jsonb_array_length(rejected) > 0 THEN
                INSERT INTO @S@.rejections (client_id, mid, entity, sync_id, reason, change)
                SELECT client, (r ->> 'mid')::bigint, c ->> 'entity', c ->> 'id', r ->> 'reason', c
                FROM jsonb_array_elements(rejected) WITH ORDINALITY AS x(r, i)
                JOIN jsonb_array_elements(batch) AS c ON (c ->> 'mid')::bigint = (r ->> 'mid')::bigint
                ORDER BY x.i;
            END IF;
            UPDATE @S@.clients c SET last_mid = greatest(c.last_mid, applied_mid), last_seen = now() WHERE c.client_id = client;
        END
        $$
        """#,

        // The rejections recorded for the mids of `batch` up to `through` (applied by an
        // earlier push of the client): a resent batch answers them again, since the client
        // resends when it never got the first answer, and would otherwise take the refused
        // changes for applied. Runs as the schema's owner (the roles that sync cannot read
        // `rejections`); refuses (CF005) a client that is not the caller's.
        #"""
        CREATE OR REPLACE FUNCTION @S@._recorded_rejections(client uuid, batch jsonb, through bigint) RETURNS jsonb
        LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            answer jsonb;
        BEGIN
            IF NOT EXISTS (SELECT 1 FROM @S@.clients c WHERE c.client_id = client AND c.user_id = @S@.coffer_user_id()) THEN
                RAISE EXCEPTION 'client % belongs to another user than %', client, @S@.coffer_user_id() USING ERRCODE = 'CF005';
            END IF;
            SELECT coalesce(jsonb_agg(jsonb_build_object('mid', f.mid, 'reason', f.reason) ORDER BY f.mid), '[]')
            INTO answer
            FROM (
                SELECT DISTINCT ON (r.mid) r.mid, r.reason
                FROM @S@.rejections r
                WHERE r.client_id = client AND r.mid <= through
                  AND r.mid IN (SELECT (e ->> 'mid')::bigint FROM jsonb_array_elements(batch) AS t(e))
                ORDER BY r.mid, r.id
            ) f;
            RETURN answer;
        END
        $$
        """#,

        // Tombstones for pushed deletes: one for each id of `ids` that has no row (a row
        // deleted by this transaction, or one the server never had), with its change's clock
        // from `hlcs`. A tombstone the trigger left in this transaction for an id of
        // `just_deleted` takes the change's clock; one already there otherwise stays as it is.
        // Runs as the schema's owner, for the caller's own client only (CF005); never
        // tombstones a live row.
        #"""
        CREATE OR REPLACE FUNCTION @S@._tombstone_ids(entity_name text, ids uuid[], hlcs bigint[], just_deleted uuid[], client uuid)
        RETURNS void
        LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET row_security = off AS $$
        DECLARE
            live uuid[] := @S@._live_ids(entity_name, ids);
        BEGIN
            IF NOT EXISTS (SELECT 1 FROM @S@.clients c WHERE c.client_id = client AND c.user_id = @S@.coffer_user_id()) THEN
                RAISE EXCEPTION 'client % belongs to another user than %', client, @S@.coffer_user_id() USING ERRCODE = 'CF005';
            END IF;
            INSERT INTO @S@.tombstones AS t (entity, sync_id, _hlc, _origin)
            SELECT entity_name, d.id, d.hlc, client
            FROM unnest(ids, hlcs) AS d(id, hlc)
            WHERE d.id IS NOT NULL AND d.hlc IS NOT NULL AND NOT (d.id = ANY(live))
            ON CONFLICT (entity, sync_id) DO UPDATE SET _hlc = EXCLUDED._hlc
                WHERE t._txid = pg_current_xact_id() AND t.sync_id = ANY(just_deleted);
        END
        $$
        """#,

        // The ids among `ids` that have a row in the entity's table, whatever the caller may
        // see. Row-level security hides rows from the push's reads: a hidden row looks absent,
        // and an edit or delete of it must be refused as forbidden, never taken for a missing
        // object (a delete would leave a tombstone that removes the row from every replica).
        // Runs as the schema's owner, whom the policies do not bind, with row_security off. A
        // table that forces its policies on the owner too (FORCE ROW LEVEL SECURITY) would
        // show it a filtered view, and a hidden row would look missing: such a table fails the
        // push (CF007) until the policies stop binding the owner. Reveals only whether an id
        // exists.
        #"""
        CREATE OR REPLACE FUNCTION @S@._live_ids(entity_name text, ids uuid[]) RETURNS uuid[]
        LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET row_security = off AS $$
        DECLARE
            live uuid[];
        BEGIN
            IF NOT EXISTS (SELECT 1 FROM @S@.entities e WHERE e.entity = entity_name) THEN
                RAISE EXCEPTION 'entity "%" is not installed in schema %', entity_name, @SL@ USING ERRCODE = 'CF001';
            END IF;
            IF (SELECT c.relforcerowsecurity FROM pg_class c WHERE c.oid = to_regclass(format('%I.%I', @SL@, entity_name))) THEN
                RAISE EXCEPTION 'table %.% forces row-level security on its owner, which sync does not support (ALTER TABLE ... NO FORCE ROW LEVEL SECURITY)',
                    @SL@, entity_name USING ERRCODE = 'CF007';
            END IF;
            EXECUTE format('SELECT coalesce(array_agg(sync_id), ''{}'') FROM %I.%I WHERE sync_id = ANY($1)', @SL@, entity_name)
                INTO live USING ids;
            RETURN live;
        END
        $$
        """#,

        // Rows a push changes are locked first (`FOR UPDATE`), which needs the UPDATE
        // privilege: a caller that may only insert (or only read) an entity reads them
        // unlocked, and its changes of existing rows are rejected as forbidden when they try.
        // Then the reason a change of a row the caller's policies hide (or do not let it change) is
        // rejected with.
        #"""
        CREATE OR REPLACE FUNCTION @S@._lock_clause(entity_name text) RETURNS text
        LANGUAGE sql STABLE AS $$
            -- Any argument: the caller may evaluate it before it filters out malformed changes.
            SELECT CASE WHEN entity_name IS NULL OR to_regclass(format('%I.%I', @SL@, entity_name)) IS NULL THEN ''
                        WHEN has_table_privilege(format('%I.%I', @SL@, entity_name), 'UPDATE') THEN ' FOR UPDATE'
                        ELSE '' END
        $$
        """#,
        // Whether row-level security filters what the caller reads of the entity's table: only
        // then can a row the caller does not find exist, and only then is _live_ids asked.
        #"""
        CREATE OR REPLACE FUNCTION @S@._hides_rows(entity_name text) RETURNS boolean
        LANGUAGE sql STABLE AS $$
            SELECT row_security_active(format('%I.%I', @SL@, entity_name))
        $$
        """#,
        #"""
        CREATE OR REPLACE FUNCTION @S@._forbidden(entity_name text, id uuid) RETURNS text
        LANGUAGE sql STABLE AS $$
            SELECT format('forbidden: %s may not change %s %s', current_user, entity_name, id)
        $$
        """#,

        // Applies one change of a push. Returns NULL when applied (or when every field lost
        // its clock comparison), else the reason it was rejected.
        #"""
        CREATE OR REPLACE FUNCTION @S@._apply(client uuid, change jsonb, clock_limit bigint) RETURNS text
        LANGUAGE plpgsql AS $$
        DECLARE
            entity_name text := change ->> 'entity';
            op text := change ->> 'op';
            is_creation boolean := coalesce((change -> 'create') = 'true'::jsonb, false);
            id uuid;
            found_rows integer;
            kinds jsonb;
            fields jsonb := coalesce(change -> 'fields', '{}');
            clocks jsonb := coalesce(change -> 'clocks', '{}');
            default_hlc bigint;
            hlc bigint;
            max_hlc bigint := 0;
            current_clocks jsonb;
            winners jsonb;
            won_clocks jsonb;
            field text;
            columns text;
            expressions text;
            inserted integer;
        BEGIN
            IF entity_name IS NULL OR op IS NULL OR jsonb_typeof(change -> 'id') IS DISTINCT FROM 'string' THEN
                RAISE EXCEPTION 'a change needs "entity", "op" and "id"' USING ERRCODE = 'CF002';
            END IF;
            IF (change ->> 'id') !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN
                RAISE EXCEPTION '"id" is not a UUID: %', change ->> 'id' USING ERRCODE = 'CF002';
            END IF;
            id := (change ->> 'id')::uuid;
            SELECT jsonb_object_agg(f.field, f.kind) INTO kinds FROM @S@.fields f WHERE f.entity = entity_name;
            IF NOT EXISTS (SELECT 1 FROM @S@.entities e WHERE e.entity = entity_name) THEN
                RAISE EXCEPTION 'entity "%" is not installed in schema %: install the newer model', entity_name, @SL@
                    USING ERRCODE = 'CF001';
            END IF;
            kinds := coalesce(kinds, '{}');
            IF jsonb_typeof(fields) <> 'object' OR jsonb_typeof(clocks) <> 'object' THEN
                RAISE EXCEPTION '"fields" and "clocks" must be objects' USING ERRCODE = 'CF002';
            END IF;
            IF change ? 'hlc' THEN
                default_hlc := @S@._dec_integer(change -> 'hlc', 'hlc', 0, 9223372036854775807)::bigint;
            END IF;

            IF op = 'delete' THEN
                hlc := least(coalesce(default_hlc, @S@._server_hlc()), clock_limit);
                PERFORM set_config('coffer.hlc', hlc::text, true);
                -- Deletes win: whatever the row's clocks, it goes; the trigger leaves the tombstone.
                EXECUTE format('DELETE FROM %I.%I WHERE sync_id = $1', @SL@, entity_name) USING id;
                GET DIAGNOSTICS inserted = ROW_COUNT;
                IF inserted = 0 AND @S@._hides_rows(entity_name) AND cardinality(@S@._live_ids(entity_name, ARRAY[id])) = 1 THEN
                    RETURN @S@._forbidden(entity_name, id);
                END IF;
                IF inserted = 0 THEN
                    PERFORM @S@._tombstone_ids(entity_name, ARRAY[id], ARRAY[hlc], '{}', client);
                END IF;
                RETURN NULL;
            ELSIF op <> 'upsert' THEN
                RAISE EXCEPTION 'unknown op "%"', op USING ERRCODE = 'CF002';
            END IF;

            -- Every field known to the server, with its clock (clamped to the server's limit).
            FOR field IN SELECT jsonb_object_keys(fields) LOOP
                IF NOT kinds ? field THEN
                    RAISE EXCEPTION 'field "%.%" is not installed in schema %: install the newer model', entity_name, field, @SL@
                        USING ERRCODE = 'CF001';
                END IF;
                IF clocks ? field THEN
                    hlc := @S@._dec_integer(clocks -> field, 'clock of ' || field, 0, 9223372036854775807)::bigint;
                ELSE
                    hlc := default_hlc;
                END IF;
                -- A JSON null clock is no clock (least() would take it for the clamp limit).
                IF hlc IS NULL THEN
                    RAISE EXCEPTION 'field "%" has no clock', field USING ERRCODE = 'CF002';
                END IF;
                clocks := clocks || jsonb_build_object(field, jsonb_build_array(least(hlc, clock_limit), client));
                max_hlc := greatest(max_hlc, least(hlc, clock_limit));
            END LOOP;
            PERFORM set_config('coffer.hlc', max_hlc::text, true);

            FOR attempt IN 1..2 LOOP
                EXECUTE format('SELECT coalesce(_clocks, ''{}'') FROM %I.%I WHERE sync_id = $1%s', @SL@, entity_name,
                               @S@._lock_clause(entity_name))
                    INTO current_clocks USING id;
                GET DIAGNOSTICS found_rows = ROW_COUNT;
                IF found_rows = 0 THEN
                    IF @S@._hides_rows(entity_name) AND cardinality(@S@._live_ids(entity_name, ARRAY[id])) = 1 THEN
                        RETURN @S@._forbidden(entity_name, id);
                    END IF;
                    IF EXISTS (SELECT 1 FROM @S@.tombstones t WHERE t.entity = entity_name AND t.sync_id = id) THEN
                        RETURN 'deleted: the object was deleted, a change does not bring it back';
                    END IF;
                    -- Only the change that creates an object may insert its row: a change of
                    -- some fields of an object the server never had (its creation was
                    -- rejected, or its tombstone collected) would make up the other fields.
                    IF NOT is_creation THEN
                        RETURN 'missing: the server has no such object (its creation never arrived or was rejected)';
                    END IF;
                    columns := '';
                    expressions := '';
                    won_clocks := '{}';
                    FOR field IN SELECT jsonb_object_keys(fields) LOOP
                        columns := columns || ', ' || quote_ident(field);
                        expressions := expressions || ', ' || @S@._decoder(kinds ->> field, field);
                        won_clocks := won_clocks || jsonb_build_object(field, clocks -> field);
                    END LOOP;
                    EXECUTE format('INSERT INTO %I.%I (sync_id, _hlc, _origin, _clocks%s) VALUES ($2, $3, $4, $5%s) '
                                   'ON CONFLICT (sync_id) DO NOTHING', @SL@, entity_name, columns, expressions)
                        USING fields, id, max_hlc, client, won_clocks;
                    GET DIAGNOSTICS inserted = ROW_COUNT;
                    IF inserted = 1 THEN
                        RETURN NULL;
                    END IF;
                    -- Another transaction inserted it first: merge into its row.
                    CONTINUE;
                END IF;

                -- Per-field last writer wins by (hlc, origin). An equal pair is the same client's
                -- later change (its clocks clamped to the same limit): it wins, as its mid says
                -- it came later.
                expressions := '';
                won_clocks := '{}';
                FOR field IN SELECT jsonb_object_keys(fields) LOOP
                    IF NOT current_clocks ? field
                        OR ((clocks -> field ->> 0)::bigint, (clocks -> field ->> 1)::uuid)
                            >= ((current_clocks -> field ->> 0)::bigint, (current_clocks -> field ->> 1)::uuid) THEN
                        expressions := expressions || format(', %I = ', field) || @S@._decoder(kinds ->> field, field);
                        won_clocks := won_clocks || jsonb_build_object(field, clocks -> field);
                    END IF;
                END LOOP;
                IF won_clocks = '{}' THEN
                    RETURN NULL;
                END IF;
                EXECUTE format('UPDATE %I.%I SET _clocks = _clocks || $3, _hlc = greatest(_hlc, $4), _origin = $5%s '
                               'WHERE sync_id = $2', @SL@, entity_name, expressions)
                    USING fields, id, won_clocks, max_hlc, client;
                RETURN NULL;
            END LOOP;
            RAISE EXCEPTION 'could not insert or update % %', entity_name, id;
        END
        $$
        """#,

        // Raised inside the set-based path for a change it cannot take as it is: the chunk is
        // split and the change ends up alone in the per-change path, which gives the reason.
        // Volatile: the planner would fold an immutable call with constant arguments (and
        // raise) while planning, whether or not a row ever reaches it.
        #"""
        CREATE OR REPLACE FUNCTION @S@._refuse_set(reason text) RETURNS bigint
        LANGUAGE plpgsql VOLATILE AS $$
        BEGIN
            RAISE EXCEPTION 'set-based push: %', reason USING ERRCODE = 'CF009';
        END
        $$
        """#,

        // Applies one change alone, in a sub-transaction of its own: the reference semantics.
        // Returns [] when applied, else [{"mid", "reason"}]. A model the server lacks (CF001)
        // and transient failures (connection, serialization, resources, shutdown, internal)
        // fail the push, so nothing advances past the change and a retry may get through;
        // so does a missing identity (CF006 from coffer_user_id(), or class 28 from a policy
        // of the app's: a policy that cannot tell who pushes must not reject every change
        // for good). Anything else the change caused (a value, a
        // constraint, a trigger, a policy's WITH CHECK: `forbidden:`) rejects it and the
        // batch goes on.
        #"""
        CREATE OR REPLACE FUNCTION @S@._apply_one(client uuid, change jsonb, clock_limit bigint) RETURNS jsonb
        LANGUAGE plpgsql AS $$
        DECLARE
            reason text;
            detail text;
        BEGIN
            BEGIN
                reason := @S@._apply(client, change, clock_limit);
            EXCEPTION
                WHEN OTHERS THEN
                    IF SQLSTATE IN ('CF001', 'CF006', 'CF007') OR left(SQLSTATE, 2) IN ('08', '28', '40', '53', '55', '57', '58', 'XX') THEN
                        RAISE;
                    END IF;
                    IF SQLSTATE = '42501' THEN
                        -- A policy's WITH CHECK, or a missing privilege.
                        reason := 'forbidden: ' || SQLERRM;
                    ELSIF SQLSTATE = '23505' THEN
                        -- The detail names the property and the value: Key (email)=(a@b.c) already exists.
                        GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
                        reason := 'unique: ' || coalesce(nullif(detail, ''), SQLERRM);
                    ELSE
                        reason := SQLERRM;
                    END IF;
            END;
            IF reason IS NULL THEN
                RETURN '[]';
            END IF;
            RETURN jsonb_build_array(jsonb_build_object('mid', (change ->> 'mid')::bigint, 'reason', reason));
        END
        $$
        """#,

        // Applies changes of one entity, each of a different object, with a few statements:
        // creations first, then per-field LWW updates, then deletes. Gives exactly what
        // applying them one by one in mid order gives, or raises (and the caller splits the
        // chunk): anything the per-change path would reject or fail on raises here, except
        // the two reasons it computes itself (deleted, missing). Returns the rejections.
        #"""
        CREATE OR REPLACE FUNCTION @S@._apply_set(client uuid, entity_name text, changes jsonb[], clock_limit bigint) RETURNS jsonb
        LANGUAGE plpgsql AS $$
        DECLARE
            target text := format('%I.%I', @SL@, entity_name);
            client_text text := client::text;
            kinds jsonb;
            rejected jsonb;
            unique_columns text[];
            u_ids uuid[]; u_mids bigint[]; u_creations boolean[]; u_fields jsonb[]; u_clocks jsonb[]; u_max bigint[]; u_keys jsonb[];
            d_ids uuid[]; d_hlcs bigint[];
            e_ids uuid[]; e_clocks jsonb[];
            w_ids uuid[]; w_won jsonb[]; w_fields jsonb[]; w_max bigint[];
            deleted_ids uuid[];
            missing_ids uuid[] := '{}';
            tombstoned_ids uuid[] := '{}';
            group_keys text[]; g_ids uuid[]; g_clocks jsonb[]; g_fields jsonb[]; g_max bigint[];
            won_columns text[];
            columns text;
            expressions text;
            affected integer;
            incomplete boolean;
        BEGIN
            SELECT jsonb_object_agg(f.field, f.kind) INTO kinds FROM @S@.fields f WHERE f.entity = entity_name;
            kinds := coalesce(kinds, '{}');

            -- Decode every change once: upserts with their clamped per-field clocks
            -- ({"field": [hlc, client]}) and highest clock, deletes with their clock.
            -- Materialized: inlined, every use of c.clocks would extract it from the change again.
            WITH c AS MATERIALIZED (
                SELECT (x ->> 'mid')::bigint AS mid, (x ->> 'id')::uuid AS id, x ->> 'op' AS op,
                       coalesce((x -> 'create') = 'true'::jsonb, false) AS creation,
                       coalesce(x -> 'fields', '{}') AS fields, coalesce(x -> 'clocks', '{}') AS clocks,
                       CASE WHEN NOT x ? 'hlc' THEN NULL
                            WHEN length(x ->> 'hlc') BETWEEN 1 AND 18 AND ltrim(x ->> 'hlc', '0123456789') = '' THEN (x ->> 'hlc')::bigint
                            ELSE @S@._dec_integer(x -> 'hlc', 'hlc', 0, 9223372036854775807)::bigint END AS default_hlc
                FROM unnest(changes) AS t(x)
            )
            -- One pass, so the arrays line up (their order does not matter: a run changes
            -- each object once).
            SELECT array_agg(c.id) FILTER (WHERE c.op = 'upsert'), array_agg(c.mid) FILTER (WHERE c.op = 'upsert'),
                   array_agg(c.creation) FILTER (WHERE c.op = 'upsert'), array_agg(c.fields) FILTER (WHERE c.op = 'upsert'),
                   array_agg(k.clocks) FILTER (WHERE c.op = 'upsert'), array_agg(k.max_hlc) FILTER (WHERE c.op = 'upsert'),
                   array_agg(k.keys) FILTER (WHERE c.op = 'upsert'),
                   array_agg(c.id) FILTER (WHERE c.op = 'delete'),
                   array_agg(least(coalesce(c.default_hlc, @S@._server_hlc()), clock_limit)) FILTER (WHERE c.op = 'delete')
                   , bool_or(k.incomplete)
            INTO u_ids, u_mids, u_creations, u_fields, u_clocks, u_max, u_keys, d_ids, d_hlcs, incomplete
            FROM c CROSS JOIN LATERAL (
                SELECT coalesce(jsonb_object_agg(f.key, jsonb_build_array(least(f.hlc, clock_limit), client_text)), '{}') AS clocks,
                       greatest(0, max(least(f.hlc, clock_limit))) AS max_hlc,
                       -- The field names (in jsonb's order of keys, the same for the same
                       -- names): creations are grouped by them.
                       coalesce(jsonb_agg(f.key), '[]') AS keys,
                       bool_or(f.hlc IS NULL OR NOT kinds ? f.key) AS incomplete
                -- A clock is most often a decimal string of at most 18 digits (always in
                -- range), read inline (a test without a regular expression: one per field is
                -- a large part of a push's time); a field without a clock takes the change's;
                -- anything else goes through _dec_integer, which refuses what is not a clock.
                -- OFFSET 0 computes each once.
                FROM (SELECT k.key, CASE WHEN length(k.clock) BETWEEN 1 AND 18 AND ltrim(k.clock, '0123456789') = '' THEN k.clock::bigint
                                         WHEN NOT c.clocks ? k.key THEN c.default_hlc
                                         ELSE @S@._dec_integer(c.clocks -> k.key, 'clock of ' || k.key, 0, 9223372036854775807)::bigint
                                    END AS hlc
                      FROM (SELECT k.key, c.clocks ->> k.key AS clock
                            FROM jsonb_object_keys(CASE WHEN c.op = 'upsert' THEN c.fields ELSE '{}' END) AS k(key) OFFSET 0) k
                      OFFSET 0) f
            ) k;
            IF incomplete THEN
                -- A field the server does not have, or one without a clock.
                PERFORM @S@._refuse_set('incomplete change');
            END IF;
            u_ids := coalesce(u_ids, '{}');
            d_ids := coalesce(d_ids, '{}');

            -- The rows the upserts change, locked in one order (fewer deadlocks between pushers).
            EXECUTE format('SELECT coalesce(array_agg(sync_id), ''{}''), coalesce(array_agg(c), ''{}'') FROM '
                           '(SELECT sync_id, coalesce(_clocks, ''{}'') AS c FROM %s WHERE sync_id = ANY($1) ORDER BY sync_id%s) s',
                           target, @S@._lock_clause(entity_name))
                INTO e_ids, e_clocks USING u_ids;

            -- Upserts of missing rows: a tombstone means deleted, no creation means missing.
            SELECT coalesce(array_agg(u.id), '{}') INTO missing_ids
            FROM unnest(u_ids) AS u(id) LEFT JOIN unnest(e_ids) AS e(id) ON e.id = u.id WHERE e.id IS NULL;
            IF cardinality(missing_ids) > 0 AND @S@._hides_rows(entity_name) AND cardinality(@S@._live_ids(entity_name, missing_ids)) > 0 THEN
                -- Rows the caller's policies hide: the per-change path rejects each as forbidden.
                PERFORM @S@._refuse_set('hidden rows');
            END IF;
            IF cardinality(missing_ids) > 0 THEN
                SELECT coalesce(array_agg(t.sync_id), '{}') INTO tombstoned_ids
                FROM @S@.tombstones t WHERE t.entity = entity_name AND t.sync_id = ANY(missing_ids);
            END IF;
            -- (Joins, not `= ANY(array)`, which compares with every element: each id appears
            -- once in each array.)
            SELECT coalesce(jsonb_agg(jsonb_build_object('mid', u.mid, 'reason', CASE WHEN t.id IS NOT NULL
                       THEN 'deleted: the object was deleted, a change does not bring it back'
                       ELSE 'missing: the server has no such object (its creation never arrived or was rejected)' END)
                       ORDER BY u.mid), '[]')
            INTO rejected
            FROM unnest(u_ids, u_mids, u_creations) AS u(id, mid, creation)
            JOIN unnest(missing_ids) AS m(id) ON m.id = u.id
            LEFT JOIN unnest(tombstoned_ids) AS t(id) ON t.id = u.id
            WHERE t.id IS NOT NULL OR NOT u.creation;

            -- Creations, one INSERT per set of fields (a column a change does not name keeps
            -- its default, as in the per-change path).
            FOR group_keys, g_ids, g_clocks, g_fields, g_max IN
                SELECT ARRAY(SELECT jsonb_array_elements_text(u.keys)),
                       array_agg(u.id), array_agg(u.clocks), array_agg(u.fields), array_agg(u.max_hlc)
                FROM unnest(u_ids, u_creations, u_fields, u_clocks, u_max, u_keys) AS u(id, creation, fields, clocks, max_hlc, keys)
                JOIN unnest(missing_ids) AS m(id) ON m.id = u.id
                LEFT JOIN unnest(tombstoned_ids) AS t(id) ON t.id = u.id
                WHERE u.creation AND t.id IS NULL
                GROUP BY u.keys
            LOOP
                SELECT coalesce(string_agg(', ' || quote_ident(k), ''), ''),
                       coalesce(string_agg(', ' || @S@._decoder_of(kinds ->> k, k, 'u.fields'), ''), '')
                INTO columns, expressions FROM unnest(group_keys) AS k;
                -- A row another transaction inserted since the lock above fails the statement
                -- (no ON CONFLICT clause: it costs a probe of the key per row): the chunk is
                -- split and the per-change path merges into that row.
                EXECUTE format('INSERT INTO %s (sync_id, _hlc, _origin, _clocks%s) '
                               'SELECT u.id, u.max_hlc, $5, u.clocks%s FROM unnest($1::uuid[], $2::bigint[], $3::jsonb[], $4::jsonb[]) '
                               'AS u(id, max_hlc, clocks, fields)', target, columns, expressions)
                    USING g_ids, g_max, g_clocks, g_fields, client;
            END LOOP;

            -- Updates: per field, the greater (hlc, origin) wins, or an equal one (the same
            -- client's later change, clamped to the same clock); a change that wins nothing
            -- writes nothing.
            SELECT array_agg(u.id), array_agg(w.won), array_agg(u.fields), array_agg(u.max_hlc)
            INTO w_ids, w_won, w_fields, w_max
            FROM unnest(u_ids, u_fields, u_clocks, u_max) AS u(id, fields, clocks, max_hlc)
            JOIN unnest(e_ids, e_clocks) AS e(id, current) ON e.id = u.id
            CROSS JOIN LATERAL (
                SELECT jsonb_object_agg(c.key, c.value) AS won FROM jsonb_each(u.clocks) AS c(key, value)
                WHERE NOT e.current ? c.key
                   OR ((c.value ->> 0)::bigint, (c.value ->> 1)::uuid) >= ((e.current -> c.key ->> 0)::bigint, (e.current -> c.key ->> 1)::uuid)
            ) w
            WHERE w.won IS NOT NULL;
            IF w_ids IS NOT NULL THEN
                -- A unique index is checked row by row in physical order: two updates that
                -- change unique columns could pass together where one by one the first fails.
                SELECT CASE WHEN bool_or(k.attnum = 0) THEN ARRAY(SELECT jsonb_object_keys(kinds))
                            ELSE array_agg(a.attname::text) END
                INTO unique_columns
                FROM pg_index i CROSS JOIN LATERAL unnest(i.indkey::int2[]) AS k(attnum)
                LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
                WHERE i.indrelid = target::regclass AND (i.indisunique OR i.indisexclusion) AND NOT i.indisprimary;
                IF unique_columns IS NOT NULL
                   AND (SELECT count(*) FROM unnest(w_won) AS x WHERE x ?| unique_columns) > 1 THEN
                    PERFORM @S@._refuse_set('several unique changes');
                END IF;
                SELECT array_agg(DISTINCT k) INTO won_columns FROM unnest(w_won) AS x, jsonb_object_keys(x) AS k;
                SELECT string_agg(format(', %I = CASE WHEN w.won ? %L THEN %s ELSE t.%I END', k, k,
                                         @S@._decoder_of(kinds ->> k, k, 'w.fields'), k), '')
                INTO expressions FROM unnest(won_columns) AS k;
                EXECUTE format('UPDATE %s AS t SET _clocks = t._clocks || w.won, _hlc = greatest(t._hlc, w.max_hlc), _origin = $5%s '
                               'FROM unnest($1::uuid[], $2::jsonb[], $3::jsonb[], $4::bigint[]) AS w(id, won, fields, max_hlc) '
                               'WHERE t.sync_id = w.id', target, expressions)
                    USING w_ids, w_won, w_fields, w_max, client;
                GET DIAGNOSTICS affected = ROW_COUNT;
                IF affected <> cardinality(w_ids) THEN
                    PERFORM @S@._refuse_set('updated rows went missing');
                END IF;
            END IF;

            -- Deletes win whatever the row's clocks. The trigger leaves each tombstone; it is
            -- then given its change's clock. An object the server does not have gets one too.
            IF cardinality(d_ids) > 0 THEN
                EXECUTE format('WITH d AS (DELETE FROM %s WHERE sync_id = ANY($1) RETURNING sync_id) '
                               'SELECT coalesce(array_agg(sync_id), ''{}'') FROM d', target)
                    INTO deleted_ids USING d_ids;
                IF cardinality(deleted_ids) < cardinality(d_ids) AND @S@._hides_rows(entity_name) AND cardinality(@S@._live_ids(entity_name,
                       ARRAY(SELECT d.id FROM unnest(d_ids) AS d(id) EXCEPT SELECT g.id FROM unnest(deleted_ids) AS g(id)))) > 0 THEN
                    PERFORM @S@._refuse_set('hidden rows');
                END IF;
                PERFORM @S@._tombstone_ids(entity_name, d_ids, d_hlcs, deleted_ids, client);
            END IF;
            RETURN rejected;
        END
        $$
        """#,

        // Applies changes of one entity that change each object once: set-based, and where
        // that fails, halved until the change at fault is alone, which goes through
        // _apply_one. Returns the rejections.
        #"""
        CREATE OR REPLACE FUNCTION @S@._apply_chunk(client uuid, entity_name text, chunk jsonb[], clock_limit bigint) RETURNS jsonb
        LANGUAGE plpgsql AS $$
        DECLARE
            rejected jsonb := '[]';
            stack_low integer[] := ARRAY[1];
            stack_high integer[] := ARRAY[cardinality(chunk)];
            low integer;
            high integer;
            middle integer;
            depth integer;
        BEGIN
            WHILE cardinality(stack_low) > 0 LOOP
                depth := cardinality(stack_low);
                low := stack_low[depth];
                high := stack_high[depth];
                stack_low := stack_low[1:depth - 1];
                stack_high := stack_high[1:depth - 1];
                IF low = high THEN
                    rejected := rejected || @S@._apply_one(client, chunk[low], clock_limit);
                    CONTINUE;
                END IF;
                BEGIN
                    rejected := rejected || @S@._apply_set(client, entity_name,
                        CASE WHEN low = 1 AND high = cardinality(chunk) THEN chunk ELSE chunk[low:high] END, clock_limit);
                EXCEPTION
                    WHEN OTHERS THEN
                        IF SQLSTATE IN ('CF006', 'CF007') OR left(SQLSTATE, 2) IN ('08', '28', '40', '53', '55', '57', '58', 'XX') THEN
                            RAISE;
                        END IF;
                        -- Halve it, the first half first (it is on top of the stack).
                        middle := (low + high) / 2;
                        stack_low := stack_low || (middle + 1) || low;
                        stack_high := stack_high || high || middle;
                END;
            END LOOP;
            RETURN rejected;
        END
        $$
        """#,

        // Push: applies a batch of changes of one client in one transaction. Changes whose
        // mid the client already pushed are skipped (a resent batch changes nothing);
        // rejected changes are recorded and the batch goes on.
        //
        // The batch is decoded once and cut into runs in which no object appears twice; in a
        // run, each entity's changes go through _apply_set together. A chunk _apply_set
        // cannot take is halved until the change it stumbles on is alone, which then goes
        // through _apply_one (the per-change path): the outcome is the one-by-one outcome.
        // `SET coffer.push_one_by_one = on` sends every change through _apply_one. JIT is off:
        // the planner overestimates the JSON functions' rows and would compile every
        // statement (tens of milliseconds each) for a batch that takes a few.
        #"""
        CREATE OR REPLACE FUNCTION @S@.coffer_push(client uuid, batch jsonb) RETURNS jsonb
        LANGUAGE plpgsql SET jit = off AS $$
        DECLARE
            applied_mid bigint;
            last_mid bigint;
            clock_limit bigint;
            problem record;
            changes jsonb[];
            entities text[];
            objects uuid[];
            ids_checked boolean;
            eligible boolean[];
            previous integer[];
            total integer;
            one_by_one boolean := coalesce(current_setting('coffer.push_one_by_one', true), '') IN ('on', 'true', '1');
            installed text[];
            run_start integer := 1;
            rejected jsonb := '[]';
            entity_name text;
            chunk jsonb[];
            low integer;
            single_run boolean;
            all_eligible boolean;
            entity_count integer;
            lock_ids uuid[];
        BEGIN
            IF client IS NULL THEN
                RAISE EXCEPTION 'coffer_push needs a client id';
            END IF;
            IF jsonb_typeof(batch) IS DISTINCT FROM 'array' THEN
                RAISE EXCEPTION 'coffer_push takes a JSON array of changes';
            END IF;
            SELECT e INTO problem FROM jsonb_array_elements(batch) WITH ORDINALITY AS t(e, i)
            WHERE jsonb_typeof(e -> 'mid') IS DISTINCT FROM 'number' ORDER BY i LIMIT 1;
            IF FOUND THEN
                RAISE EXCEPTION 'every change needs a numeric "mid": %', left(problem.e::text, 200);
            END IF;
            -- Out of order, a skipped mid would be taken for one already applied.
            SELECT m.mid, m.before INTO problem FROM (
                SELECT (e ->> 'mid')::bigint AS mid, lag((e ->> 'mid')::bigint) OVER (ORDER BY i) AS before, i
                FROM jsonb_array_elements(batch) WITH ORDINALITY AS t(e, i)) m
            WHERE m.mid < 1 OR m.mid <= m.before ORDER BY m.i LIMIT 1;
            IF FOUND THEN
                RAISE EXCEPTION 'mids must be positive and ascend within a batch: % after %', problem.mid, problem.before
                    USING ERRCODE = 'CF003';
            END IF;
            applied_mid := @S@._claim_client(client);
            -- A clock more than five minutes ahead of the server's is pulled back to that.
            clock_limit := ((floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint + 300000) << 16) | 65535;

            -- The changes not applied yet, in mid order; for each, whether the set-based path
            -- may try it (a well-formed change of an installed entity) and the position of the
            -- previous change of the same object.
            installed := ARRAY(SELECT n.entity FROM @S@.entities n);
            -- Whether every "id" of the batch is a UUID string, tested on all of them at
            -- once (a regular expression per change is a large part of a push's time): each
            -- is 36 characters long, so their concatenation is a run of UUIDs only if each
            -- one is. When not, each change's id is tested alone.
            SELECT coalesce(bool_and(coalesce(jsonb_typeof(e -> 'id') = 'string' AND length(e ->> 'id') = 36, false))
                            AND string_agg(e ->> 'id', '') ~ '^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})*$',
                            false)
            INTO ids_checked FROM jsonb_array_elements(batch) AS t(e);
            SELECT array_agg(d.e), array_agg(d.entity), array_agg(d.object), array_agg(d.ok), array_agg(d.before), max(d.mid), count(*),
                   bool_and(d.before IS NULL), bool_and(d.ok), count(DISTINCT d.entity)
            INTO changes, entities, objects, eligible, previous, last_mid, total, single_run, all_eligible, entity_count
            FROM (
                SELECT v.e, v.mid, v.entity, v.object, v.ok,
                       CASE WHEN v.ok THEN lag(v.position) OVER (PARTITION BY v.ok, v.entity, v.object ORDER BY v.position) END AS before
                FROM (
                    -- Applied mids are a prefix of the batch (mids ascend), so positions count
                    -- from the first change to apply.
                    SELECT w.*, NOT one_by_one
                               AND w.e ->> 'op' IN ('upsert', 'delete')
                               AND w.object IS NOT NULL
                               AND jsonb_typeof(coalesce(w.e -> 'fields', '{}')) = 'object'
                               AND jsonb_typeof(coalesce(w.e -> 'clocks', '{}')) = 'object'
                               AND w.entity = ANY(installed) AS ok,
                           w.i - min(w.i) OVER () + 1 AS position
                    FROM (
                        -- The object, when the id is a UUID string.
                        SELECT e, i, (e ->> 'mid')::bigint AS mid, e ->> 'entity' AS entity,
                               CASE WHEN ids_checked
                                         OR (jsonb_typeof(e -> 'id') = 'string'
                                             AND (e ->> 'id') ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$')
                                    THEN (e ->> 'id')::uuid END AS object
                        FROM jsonb_array_elements(batch) WITH ORDINALITY AS t(e, i)
                        WHERE (e ->> 'mid')::bigint > applied_mid
                    ) w
                ) v
                ORDER BY v.position
            ) d;

            -- Every existing row the batch changes is locked before any is changed, in one
            -- order for every pusher (entity, then sync_id): pushes of overlapping rows wait
            -- for each other instead of deadlocking, whatever order their batches name the
            -- rows in and however they are cut into runs (each run, and its deletes, would
            -- otherwise lock its own rows when it comes).
            FOR entity_name, lock_ids IN
                SELECT u.entity, array_agg(DISTINCT u.object)
                FROM unnest(objects, entities) AS u(object, entity)
                WHERE u.entity = ANY(installed) AND u.object IS NOT NULL
                GROUP BY u.entity ORDER BY u.entity
            LOOP
                -- Once per entity, not per change: a role without UPDATE reads its rows unlocked.
                CONTINUE WHEN @S@._lock_clause(entity_name) = '';
                EXECUTE format('SELECT count(*) FROM (SELECT 1 FROM %I.%I WHERE sync_id = ANY($1) ORDER BY sync_id FOR UPDATE) l',
                               @SL@, entity_name)
                    USING lock_ids;
            END LOOP;

            PERFORM set_config('coffer.origin', client::text, true);
            IF total > 0 AND single_run AND all_eligible AND entity_count = 1 THEN
                -- The common batch: one entity, each object once.
                rejected := @S@._apply_chunk(client, entities[1], changes, clock_limit);
            ELSE
                FOR cut IN 1..total + 1 LOOP
                    CONTINUE WHEN cut <= total AND coalesce(previous[cut] < run_start, true);
                    -- Changes run_start ..< cut touch each object once.
                    FOR entity_name, chunk IN
                        SELECT CASE WHEN u.ok THEN u.entity END, array_agg(u.e ORDER BY u.i)
                        FROM unnest(changes[run_start:cut - 1], entities[run_start:cut - 1], eligible[run_start:cut - 1])
                             WITH ORDINALITY AS u(e, entity, ok, i)
                        GROUP BY 1 ORDER BY min(u.i)
                    LOOP
                        IF entity_name IS NULL THEN
                            -- Malformed or of no installed entity: each alone (the reason, or CF001).
                            FOR low IN 1..cardinality(chunk) LOOP
                                rejected := rejected || @S@._apply_one(client, chunk[low], clock_limit);
                            END LOOP;
                        ELSE
                            rejected := rejected || @S@._apply_chunk(client, entity_name, chunk, clock_limit);
                        END IF;
                    END LOOP;
                    run_start := cut;
                END LOOP;
            END IF;
            PERFORM set_config('coffer.origin', '', true);
            PERFORM set_config('coffer.hlc', '', true);

            IF jsonb_array_length(rejected) > 0 THEN
                SELECT jsonb_agg(r ORDER BY (r ->> 'mid')::bigint) INTO rejected FROM jsonb_array_elements(rejected) AS r;
            END IF;
            PERFORM @S@._finish_push(client, greatest(applied_mid, last_mid), rejected, batch);
            -- Mids an earlier push applied (this batch is resent: that push's answer was lost)
            -- are answered as that push answered them.
            IF applied_mid > 0 AND EXISTS (SELECT 1 FROM jsonb_array_elements(batch) AS t(e) WHERE (e ->> 'mid')::bigint <= applied_mid) THEN
                rejected := @S@._recorded_rejections(client, batch, applied_mid) || rejected;
            END IF;
            applied_mid := greatest(applied_mid, last_mid);
            RETURN jsonb_build_object('lastMid', applied_mid, 'txid', pg_current_xact_id()::text, 'rejected', rejected);
        END
        $$
        """#,

        // Pull: one page of an entity's changes (rows and tombstones) after `cursor`, below
        // the visibility horizon, in (_txid, sync_id) order, with the cursor to pass next.
        // The page is read along the cursor indexes: with statistics older than the rows (a
        // table just filled), the planner would otherwise pick a bitmap scan or a sort of
        // every row after the cursor, and a pull of n rows would cost n squared.
        // A cursor is "<txid>" or "<txid>/<sync_id>", followed by "@<floor>" once a pull
        // from "0" began while the tombstone collection floor was <floor> (above 0): such a
        // puller took every object from the table itself, so only tombstones collected since
        // (the floor rose) past its position can be missing to it, and only then does it
        // get CF004. Without the suffix, any position below the floor gets CF004.
        //
        // Sizes: a page ends after `page_limit` changes, or after the change that takes it
        // to `page_bytes` (at most the largest row) or past, whichever comes first; the first
        // change always goes, so the cursor moves. Rows are sized before they are encoded
        // (_sizer), and a row is encoded only when it goes in the page. A row larger than
        // _largest_row() goes as a marker, {"op": "oversized", "id", "txid", "hlc", "origin",
        // "bytes"}, so one row no one can carry does not stop the entity's pull. A page whose
        // encoding still fails on a limit (a document sized by its compressed length) or
        // comes out above twice the largest row (128 MiB) is made again of its first change
        // alone, and that change,
        // if it fails too, goes as a marker.
        #"""
        CREATE OR REPLACE FUNCTION @S@.coffer_pull(entity text, from_cursor text, page_limit integer, page_bytes bigint,
                                                  scope_name text, scope_parameters jsonb) RETURNS jsonb
        LANGUAGE plpgsql STABLE SET extra_float_digits = 3 SET enable_bitmapscan = off SET enable_sort = off AS $$
        DECLARE
            scope_predicate text;
            scope_filter text := '';
            wake_expression text;
            wake text := coffer_pull.entity || '/';
            moved boolean := false;
            horizon xid8 := pg_snapshot_xmin(pg_current_snapshot());
            after_txid xid8;
            after_id uuid;
            cursor_position text := from_cursor;
            base_floor xid8;
            current_floor xid8 := (SELECT m.value::xid8 FROM @S@.meta m WHERE m.key = 'gc_floor');
            largest bigint := @S@._largest_row();
            budget bigint;
            encoded text;
            sized text;
            page_query text;
            changes jsonb;
            total integer;
            kept integer;
            last_change jsonb;
            next_cursor text;
            more boolean;
        BEGIN
            IF page_limit IS NULL OR page_limit < 1 THEN
                RAISE EXCEPTION 'page_limit must be at least 1';
            END IF;
            budget := least(greatest(coalesce(page_bytes, largest), 1), largest);
            IF NOT EXISTS (SELECT 1 FROM @S@.entities e WHERE e.entity = coffer_pull.entity) THEN
                RAISE EXCEPTION 'entity "%" is not installed in schema %', entity, @SL@ USING ERRCODE = 'CF001';
            END IF;
            -- A scope's rows: its predicate, with the subscription's parameters as $8, on top of
            -- the caller's policies. Tombstones are not filtered (a deleted row has no values
            -- to test); a replica ignores deletes of objects it does not hold.
            IF coalesce(scope_name, '') <> '' THEN
                scope_predicate := @S@._scope_predicate(entity, scope_name);
                scope_filter := format(' AND EXISTS (SELECT 1 FROM (SELECT $8::jsonb AS parameters) scope WHERE (%s))', scope_predicate);
                -- The key this subscription's waits name (`<entity>/` without one).
                SELECT s.wake_parameters INTO wake_expression FROM @S@.scopes s
                WHERE s.entity = coffer_pull.entity AND s.name = scope_name;
                IF wake_expression IS NOT NULL THEN
                    EXECUTE format('SELECT @S@._wake_key($1, $2, (%s)::text) FROM (SELECT $3::jsonb AS parameters) scope', wake_expression)
                    INTO wake USING entity, scope_name, scope_parameters;
                END IF;
            END IF;
            IF from_cursor ~ '@[0-9]{1,20}$' THEN
                base_floor := substring(from_cursor FROM '@([0-9]{1,20})$')::xid8;
                cursor_position := substring(from_cursor FROM '^(.*)@[0-9]{1,20}$');
            END IF;
            IF coalesce(cursor_position, '') = '' THEN
                after_txid := '0'::xid8;
            ELSIF cursor_position ~ '^[0-9]{1,20}$' THEN
                after_txid := cursor_position::xid8;
            ELSIF cursor_position ~* '^[0-9]{1,20}/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN
                after_txid := split_part(cursor_position, '/', 1)::xid8;
                after_id := split_part(cursor_position, '/', 2)::uuid;
            ELSE
                RAISE EXCEPTION 'not a pull cursor: %', from_cursor;
            END IF;
            IF after_txid = '0'::xid8 AND after_id IS NULL AND base_floor IS NULL AND current_floor > '0'::xid8 THEN
                base_floor := current_floor;
            END IF;
            -- Tombstones below the floor were collected: a replica that has not seen them all
            -- must start again from "0" (a full resync, which brings every live row).
            IF after_txid <> '0'::xid8 AND after_txid < current_floor AND (base_floor IS NULL OR current_floor > base_floor) THEN
                RAISE EXCEPTION 'resync needed: cursor % is below the tombstone collection floor %', from_cursor,
                    current_floor USING ERRCODE = 'CF004';
            END IF;

            -- A row's size: a constant for its stamps, the field names and the fixed-size
            -- values, plus the length of each variable-size value.
            SELECT coalesce(string_agg(format('jsonb_build_object(%L, %s)', f.field, @S@._encoder(f.kind, f.field)),
                                       ' || ' ORDER BY f.field), '''{}''::jsonb'),
                   (160 + coalesce(sum(2 * octet_length(f.field) + 110), 0))::text
                       || coalesce(' + ' || string_agg(@S@._sizer(f.kind, f.field), ' + ' ORDER BY f.field), '')
                INTO encoded, sized FROM @S@.fields f WHERE f.entity = coffer_pull.entity;

            -- Rows are sized in the scan and summed in (_txid, sync_id) order; a row is
            -- encoded only while the rows before it fit in the budget (a marker stands for a
            -- row too large, and counts 200 bytes). The page keeps the merged changes (rows
            -- and tombstones) while the ones before them fit: as a row's merged sum is at
            -- least its sum among rows, every row kept was encoded.
            -- $1 horizon, $2/$3 the cursor, $4 how many to read, $5 the entity, $6 the
            -- budget, $7 the largest row.
            page_query := format($q$
                SELECT coalesce(jsonb_agg(p.c ORDER BY p.t, p.s) FILTER (WHERE p.kept), '[]'),
                       count(*) FILTER (WHERE p.kept), count(*)
                FROM (
                    SELECT m.c, m.t, m.s, sum(m.z) OVER (ORDER BY m.t, m.s ROWS UNBOUNDED PRECEDING) - m.z < $6 AS kept
                    FROM (
                        SELECT * FROM (
                            SELECT CASE WHEN w._coffer_bytes > $7 THEN
                                            jsonb_build_object('op', 'oversized', 'id', w.sync_id, 'txid', w._txid::text,
                                                'hlc', w._hlc::text, 'origin', w._origin, 'bytes', w._coffer_bytes)
                                        WHEN w._coffer_upto - w._coffer_bytes < $6 THEN
                                            jsonb_build_object('op', 'upsert', 'id', w.sync_id, 'txid', w._txid::text,
                                                'hlc', w._hlc::text, 'origin', w._origin, 'clocks', w._clocks, 'fields', %s)
                                   END AS c,
                                   w._txid AS t, w.sync_id AS s,
                                   CASE WHEN w._coffer_bytes > $7 THEN 200 ELSE w._coffer_bytes END AS z
                            FROM (
                                SELECT v.*, sum(CASE WHEN v._coffer_bytes > $7 THEN 200 ELSE v._coffer_bytes END)
                                           OVER (ORDER BY v._txid, v.sync_id ROWS UNBOUNDED PRECEDING) AS _coffer_upto
                                FROM (
                                    SELECT r.*, %s AS _coffer_bytes
                                    FROM %I.%I r
                                    WHERE r._txid < $1 AND CASE WHEN $3::uuid IS NULL THEN r._txid >= $2
                                                                ELSE (r._txid, r.sync_id) > ($2, $3::uuid) END %s
                                    ORDER BY r._txid, r.sync_id
                                    LIMIT $4
                                ) v
                            ) w
                        ) live_rows
                        UNION ALL
                        SELECT * FROM (
                            SELECT jsonb_build_object('op', 'delete', 'id', d.sync_id, 'txid', d._txid::text,
                                       'hlc', d._hlc::text, 'origin', d._origin) AS c,
                                   d._txid AS t, d.sync_id AS s, 160::bigint AS z
                            FROM %I.tombstones d
                            WHERE d.entity = $5 AND d._txid < $1 AND CASE WHEN $3::uuid IS NULL THEN d._txid >= $2
                                                        ELSE (d._txid, d.sync_id) > ($2, $3::uuid) END
                            ORDER BY d._txid, d.sync_id
                            LIMIT $4
                        ) deleted_rows
                        ORDER BY t, s
                        LIMIT $4
                    ) m
                ) p
            $q$, encoded, sized, @SL@, entity, scope_filter, @SL@);

            BEGIN
                EXECUTE page_query INTO changes, kept, total
                USING horizon, after_txid, after_id, page_limit + 1, entity, budget, largest, scope_parameters;
                IF pg_column_size(changes) > 2 * largest THEN
                    RAISE EXCEPTION 'page too large' USING ERRCODE = 'program_limit_exceeded';
                END IF;
            EXCEPTION WHEN program_limit_exceeded THEN
                -- The first change alone; and when even that cannot be encoded, a marker.
                BEGIN
                    EXECUTE page_query INTO changes, kept, total
                    USING horizon, after_txid, after_id, 2, entity, 1, largest, scope_parameters;
                    IF pg_column_size(changes) > 2 * largest THEN
                        RAISE EXCEPTION 'row too large' USING ERRCODE = 'program_limit_exceeded';
                    END IF;
                EXCEPTION WHEN program_limit_exceeded THEN
                    -- A tombstone is small, so the change that failed is a row.
                    EXECUTE format($q$
                        SELECT jsonb_build_array(jsonb_build_object('op', 'oversized', 'id', r.sync_id, 'txid', r._txid::text,
                                   'hlc', r._hlc::text, 'origin', r._origin, 'bytes', greatest(%s, $4 + 1)))
                        FROM %I.%I r
                        WHERE r._txid < $1 AND CASE WHEN $3::uuid IS NULL THEN r._txid >= $2
                                                    ELSE (r._txid, r.sync_id) > ($2, $3::uuid) END %s
                        ORDER BY r._txid, r.sync_id
                        LIMIT 1
                    $q$, sized, @SL@, entity, scope_filter)
                    INTO changes
                    USING horizon, after_txid, after_id, largest, NULL::text, NULL::bigint, NULL::bigint, scope_parameters;
                    kept := 1;
                    total := 2;
                END;
                IF total > kept THEN
                    -- The page ends early: what follows comes in the next one.
                    total := page_limit + 2;
                END IF;
            END;

            more := total > kept OR kept > page_limit;
            IF kept > page_limit THEN
                changes := changes - page_limit;
                kept := page_limit;
            END IF;
            IF more THEN
                last_change := changes -> (kept - 1);
                next_cursor := (last_change ->> 'txid') || '/' || (last_change ->> 'id');
            ELSIF horizon > after_txid THEN
                next_cursor := horizon::text;
            ELSE
                next_cursor := coalesce(nullif(cursor_position, ''), '0');
            END IF;
            IF base_floor IS NOT NULL THEN
                next_cursor := next_cursor || '@' || base_floor::text;
            END IF;
            -- Moves in this page's span (from the cursor to the horizon): rows may have entered
            -- or left the scope without a change of their own. The first page of a pull from
            -- "0" reflects every move below its horizon already. Spans of successive pages
            -- overlap and leave no gap, so every move is reported by a page whose snapshot
            -- has it committed, and the comparison that follows sees it.
            IF after_txid <> '0'::xid8 OR after_id IS NOT NULL THEN
                moved := EXISTS (SELECT 1 FROM @S@.moves mv
                                 WHERE mv.entity = coffer_pull.entity AND mv._txid >= after_txid AND mv._txid < horizon);
            END IF;
            -- The server's clock, which a replica whose clock is slow catches up with; and the
            -- key of the wake-ups that concern this pull.
            RETURN jsonb_build_object('changes', changes, 'cursor', next_cursor, 'more', more,
                                      'clock', @S@._server_hlc()::text, 'moved', moved, 'wake', wake);
        END
        $$
        """#,
        // The pull of the whole table (as the caller's policies show it).
        #"""
        CREATE OR REPLACE FUNCTION @S@.coffer_pull(entity text, from_cursor text, page_limit integer, page_bytes bigint) RETURNS jsonb
        LANGUAGE sql STABLE AS $$
            SELECT @S@.coffer_pull(entity, from_cursor, page_limit, page_bytes, NULL, NULL)
        $$
        """#,
        // The pull of a replica that gives no byte budget: pages of at most 4 MiB.
        #"""
        CREATE OR REPLACE FUNCTION @S@.coffer_pull(entity text, from_cursor text, page_limit integer) RETURNS jsonb
        LANGUAGE sql STABLE AS $$
            SELECT @S@.coffer_pull(entity, from_cursor, page_limit, 4194304)
        $$
        """#,

        // Fetch: the current state of chosen objects of an entity, as a page in coffer_pull's
        // format: an upsert for each object the table has, a delete for each it has not (with
        // its tombstone's stamps when one is left). A replica applies it without moving its
        // cursor: after a resync, for the objects the pull did not return; after a push, for
        // the objects whose changes the server refused. Both queries run in the function's
        // one snapshot, so every id is answered once. A row larger than _largest_row() goes
        // as a marker, as in a pull.
        #"""
        CREATE OR REPLACE FUNCTION @S@.coffer_fetch(entity text, ids uuid[]) RETURNS jsonb
        LANGUAGE plpgsql STABLE SET extra_float_digits = 3 AS $$
        DECLARE
            encoded text;
            sized text;
            present jsonb;
            absent jsonb;
        BEGIN
            IF NOT EXISTS (SELECT 1 FROM @S@.entities e WHERE e.entity = coffer_fetch.entity) THEN
                RAISE EXCEPTION 'entity "%" is not installed in schema %', entity, @SL@ USING ERRCODE = 'CF001';
            END IF;
            IF ids IS NULL OR cardinality(ids) > 10000 THEN
                RAISE EXCEPTION 'coffer_fetch takes up to 10000 ids, not %', coalesce(cardinality(ids)::text, 'NULL');
            END IF;

            SELECT coalesce(string_agg(format('jsonb_build_object(%L, %s)', f.field, @S@._encoder(f.kind, f.field)),
                                       ' || ' ORDER BY f.field), '''{}''::jsonb'),
                   (160 + coalesce(sum(2 * octet_length(f.field) + 110), 0))::text
                       || coalesce(' + ' || string_agg(@S@._sizer(f.kind, f.field), ' + ' ORDER BY f.field), '')
                INTO encoded, sized FROM @S@.fields f WHERE f.entity = coffer_fetch.entity;

            -- The entity's table alone in scope: the encoders name its columns unqualified.
            EXECUTE format($q$
                SELECT coalesce(jsonb_agg(CASE WHEN w._coffer_bytes > $2 THEN
                               jsonb_build_object('op', 'oversized', 'id', w.sync_id, 'txid', w._txid::text,
                                   'hlc', w._hlc::text, 'origin', w._origin, 'bytes', w._coffer_bytes)
                           ELSE jsonb_build_object('op', 'upsert', 'id', w.sync_id, 'txid', w._txid::text,
                               'hlc', w._hlc::text, 'origin', w._origin, 'clocks', w._clocks, 'fields', %s) END
                           ORDER BY w.sync_id), '[]')
                FROM (SELECT r.*, %s AS _coffer_bytes FROM %I.%I r WHERE r.sync_id = ANY($1)) w
            $q$, encoded, sized, @SL@, entity)
            INTO present
            USING ids, @S@._largest_row();
            EXECUTE format($q$
                SELECT coalesce(jsonb_agg(jsonb_build_object('op', 'delete', 'id', w.id, 'txid', coalesce(d._txid::text, '0'),
                           'hlc', coalesce(d._hlc, 0)::text, 'origin', d._origin) ORDER BY w.id), '[]')
                FROM (SELECT DISTINCT u.id FROM unnest($1::uuid[]) AS u(id) WHERE u.id IS NOT NULL) w
                LEFT JOIN %I.tombstones d ON d.entity = $2 AND d.sync_id = w.id
                WHERE NOT EXISTS (SELECT 1 FROM %I.%I r WHERE r.sync_id = w.id)
            $q$, @SL@, @SL@, entity)
            INTO absent
            USING ids, entity;
            RETURN jsonb_build_object('changes', present || absent, 'cursor', '0', 'more', false,
                                      'clock', @S@._server_hlc()::text);
        END
        $$
        """#,

        // The ids of the rows of `entity` that the caller sees and that match any of
        // `subscriptions` (`[{"scope": "<name>" | "", "parameters": {...}}, ...]`; the scope ''
        // is the whole table), after `after_id` in id order, at most `page_limit`:
        // `{"ids": [...], "more": bool}`. A replica compares them with the ids it holds: it
        // removes what is no longer there and fetches what entered.
        #"""
        CREATE OR REPLACE FUNCTION @S@.coffer_scope_ids(entity text, subscriptions jsonb, after_id uuid, page_limit integer) RETURNS jsonb
        LANGUAGE plpgsql STABLE AS $$
        DECLARE
            item jsonb;
            position integer := 0;
            scope_predicate text;
            filters text := '';
            parameters jsonb := '[]';
            ids jsonb;
            total integer;
        BEGIN
            IF NOT EXISTS (SELECT 1 FROM @S@.entities e WHERE e.entity = coffer_scope_ids.entity) THEN
                RAISE EXCEPTION 'entity "%" is not installed in schema %', entity, @SL@ USING ERRCODE = 'CF001';
            END IF;
            IF page_limit IS NULL OR page_limit < 1 OR page_limit > 100000 THEN
                RAISE EXCEPTION 'page_limit must be 1 to 100000, not %', page_limit;
            END IF;
            IF jsonb_typeof(subscriptions) IS DISTINCT FROM 'array' OR jsonb_array_length(subscriptions) > 1000 THEN
                RAISE EXCEPTION 'subscriptions must be a JSON array of at most 1000, not %', left(subscriptions::text, 100) USING ERRCODE = 'CF002';
            END IF;
            FOR item IN SELECT e.value FROM jsonb_array_elements(subscriptions) e LOOP
                IF jsonb_typeof(item) IS DISTINCT FROM 'object' OR coalesce(jsonb_typeof(item -> 'scope'), 'string') <> 'string'
                   OR coalesce(jsonb_typeof(item -> 'parameters'), 'object') NOT IN ('object', 'null') THEN
                    RAISE EXCEPTION 'not a subscription: %', left(item::text, 100) USING ERRCODE = 'CF002';
                END IF;
                IF coalesce(item ->> 'scope', '') = '' THEN
                    filters := filters || ' OR true';
                ELSE
                    scope_predicate := @S@._scope_predicate(entity, item ->> 'scope');
                    filters := filters || format(' OR EXISTS (SELECT 1 FROM (SELECT $3 -> %s AS parameters) scope WHERE (%s))',
                                                 position, scope_predicate);
                END IF;
                parameters := parameters || jsonb_build_array(coalesce(item -> 'parameters', 'null'::jsonb));
                position := position + 1;
            END LOOP;
            IF filters = '' THEN
                RETURN jsonb_build_object('ids', '[]'::jsonb, 'more', false);
            END IF;
            EXECUTE format($q$
                SELECT coalesce(jsonb_agg(p.sync_id ORDER BY p.sync_id), '[]'), count(*)
                FROM (SELECT r.sync_id FROM %I.%I r
                      WHERE ($1::uuid IS NULL OR r.sync_id > $1::uuid) AND (false %s)
                      ORDER BY r.sync_id LIMIT $2) p
            $q$, @SL@, entity, filters)
            INTO ids, total
            USING after_id, page_limit + 1, parameters;
            IF total > page_limit THEN
                RETURN jsonb_build_object('ids', ids - page_limit, 'more', true);
            END IF;
            RETURN jsonb_build_object('ids', ids, 'more', false);
        END
        $$
        """#,
    ]
}
