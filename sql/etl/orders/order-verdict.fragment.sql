-- The verdict on one raw order document (column `raw`): '' when valid, else the first failing
-- reason. Not a statement: tasks/orders.ts pastes this expression into both parse statements as
-- the placeholder orders.verdict, so the valid and the error route cannot disagree.
--   not_an_object    not a single JSON object
--   keyset_mismatch  its top-level keys are not exactly the 11 (keys of nested objects, up to two
--                    levels deep, e.g. items' lines, are cut out first: the outer braces are
--                    dropped, then innermost {…} are replaced twice)
--   field_invalid    a value of the wrong kind: order_id a non-empty string; user_id an integer
--                    that fits UInt64 (no sign, no leading zero); status created/paid/cancelled;
--                    created_at/updated_at YYYY-MM-DDTHH:MM:SS.mmmZ and a real instant; the four
--                    money fields strings with exactly two decimals that fit Decimal(18,2); items an
--                    array of objects with exactly sku (string), qty (integer), price (money);
--                    snapshot_date a real date YYYY-MM-DD
-- 18.16 has no JSONExtract: fields are read with visitParamExtract*, which expects compact JSON
-- (no spaces around ':'), as the generator writes it; a spaced document fails as field_invalid.
-- Only functions that cannot throw are used (match, …OrZero parsers, comparisons).
multiIf(
    NOT match(raw, '^[[:space:]]*[{].*[}][[:space:]]*$'), 'not_an_object',
    arraySort(extractAll(
        replaceRegexpAll(replaceRegexpAll(replaceRegexpAll(raw, '^[[:space:]]*[{]|[}][[:space:]]*$', ''), '[{][^{}]*[}]', 'O'), '[{][^{}]*[}]', 'O'),
        '"([A-Za-z0-9_]+)"[[:space:]]*:'))
        != ['created_at', 'delivery', 'discount', 'items', 'items_total', 'order_id', 'snapshot_date', 'status', 'total', 'updated_at', 'user_id'],
        'keyset_mismatch',
    NOT (
        match(visitParamExtractRaw(raw, 'order_id'), '^"[^"\\\\]+"$')
        AND match(visitParamExtractRaw(raw, 'user_id'), '^(0|[1-9][0-9]{0,19})$')
        AND toString(toUInt64OrZero(visitParamExtractRaw(raw, 'user_id'))) = visitParamExtractRaw(raw, 'user_id')
        AND visitParamExtractRaw(raw, 'status') IN ('"created"', '"paid"', '"cancelled"')
        AND arrayAll(
            t -> match(t, '^"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{3}Z"$')
                AND formatDateTime(toDateTimeOrZero(concat(substring(t, 2, 10), ' ', substring(t, 13, 8)), 'UTC'), '%Y-%m-%dT%H:%M:%S', 'UTC') = substring(t, 2, 19),
            [visitParamExtractRaw(raw, 'created_at'), visitParamExtractRaw(raw, 'updated_at')])
        AND arrayAll(
            m -> match(m, '^"[0-9]{1,16}[.][0-9]{2}"$'),
            [visitParamExtractRaw(raw, 'items_total'), visitParamExtractRaw(raw, 'discount'),
             visitParamExtractRaw(raw, 'delivery'), visitParamExtractRaw(raw, 'total')])
        AND match(visitParamExtractRaw(raw, 'items'), '^\\[[[:space:]]*([{][^{}]*[}][[:space:]]*(,[[:space:]]*[{][^{}]*[}][[:space:]]*)*)?\\]$')
        AND arrayAll(
            o -> arraySort(extractAll(o, '"([A-Za-z0-9_]+)"[[:space:]]*:')) = ['price', 'qty', 'sku']
                AND match(visitParamExtractRaw(o, 'sku'), '^"[^"\\\\]+"$')
                AND match(visitParamExtractRaw(o, 'qty'), '^[1-9][0-9]{0,8}$')
                AND match(visitParamExtractRaw(o, 'price'), '^"[0-9]{1,16}[.][0-9]{2}"$'),
            extractAll(visitParamExtractRaw(raw, 'items'), '[{][^{}]*[}]'))
        AND match(visitParamExtractRaw(raw, 'snapshot_date'), '^"[0-9]{4}-[0-9]{2}-[0-9]{2}"$')
        AND toString(toDateOrZero(substring(visitParamExtractRaw(raw, 'snapshot_date'), 2, 10))) = substring(visitParamExtractRaw(raw, 'snapshot_date'), 2, 10)
    ), 'field_invalid',
    '')
