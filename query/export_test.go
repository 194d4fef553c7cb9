package query

// ToStatus exposes toStatus to the black-box tests.
var ToStatus = toStatus

// DecodeCursor and EncodeNameCursor expose the cursor codec to the fuzz test.
var DecodeCursor = func(s, query string) (name, key, snapshot string, offset int, err error) {
	c, err := decodeCursor(s, query)
	if err != nil || c == nil {
		return "", "", "", 0, err
	}
	return c.Name, c.Key, c.Snapshot, c.Offset, nil
}

// EncodeNameCursor makes a name-order cursor, as a page does.
func EncodeNameCursor(query, name, key string) string {
	return (&cursor{Query: query, Name: name, Key: key}).encode()
}

// NameContains exposes nameContains to the black-box tests.
var NameContains = nameContains
