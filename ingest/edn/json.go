package edn

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
)

// ToJSON converts a parsed value to JSON. Map keys become strings: a
// keyword or a string as its text without a colon, anything else as its EDN
// text ("nil", "1"). Keywords and symbols become strings, sets sorted
// arrays, characters one-character strings and tags {"tag": ..., "value":
// ...}. Object keys come out sorted, so equal values give equal bytes.
func ToJSON(v any) ([]byte, error) {
	j, err := jsonValue(v)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(j)
	if err != nil {
		return nil, fmt.Errorf("edn: to JSON: %w", err)
	}
	return b, nil
}

// KeyString is the JSON object key ToJSON uses for an EDN map key.
func KeyString(k any) string {
	switch x := k.(type) {
	case string:
		return x
	case Keyword:
		return string(x)
	case Symbol:
		return string(x)
	}
	return String(k)
}

func jsonValue(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, string, int64:
		return x, nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return String(x), nil
		}
		return x, nil
	case Keyword:
		return string(x), nil
	case Symbol:
		return string(x), nil
	case Char:
		return string(rune(x)), nil
	case Composite:
		return string(x), nil
	case *big.Int:
		return json.Number(x.String()), nil
	case Tag:
		inner, err := jsonValue(x.Value)
		if err != nil {
			return nil, err
		}
		return map[string]any{"tag": x.Tagname, "value": inner}, nil
	case Vector:
		return jsonSlice(x)
	case Set:
		return jsonSlice(x)
	case Map:
		out := make(map[string]any, len(x))
		for k, e := range x {
			j, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			out[KeyString(k)] = j
		}
		return out, nil
	default:
		// #inst and #base64 decode to time.Time and []byte, which
		// encoding/json handles.
		return x, nil
	}
}

func jsonSlice(s []any) ([]any, error) {
	out := make([]any, len(s))
	for i, e := range s {
		j, err := jsonValue(e)
		if err != nil {
			return nil, err
		}
		out[i] = j
	}
	return out, nil
}
