package limiter

// keyed is a model's state per key. The last key asked about and its
// state are at hand without a map lookup, and the map is made only when a
// second key comes: a replay's requests are nearly all of one key, often
// of one key alone, and inference builds a model for every replay.
type keyed[S any] struct {
	lastKey string
	last    *S            // the state of lastKey; nil when no key was asked about yet
	m       map[string]*S // every key's state, once there were two keys
}

// lookup is key's state, nil if it has none.
func (k *keyed[S]) lookup(key string) *S {
	if k.last != nil && key == k.lastKey {
		return k.last
	}
	s := k.m[key]
	if s != nil {
		k.lastKey, k.last = key, s
	}
	return s
}

// add gives key the state s.
func (k *keyed[S]) add(key string, s *S) {
	if k.last != nil && k.m == nil {
		k.m = map[string]*S{k.lastKey: k.last}
	}
	if k.m != nil {
		k.m[key] = s
	}
	k.lastKey, k.last = key, s
}

// get is key's state, a new zero one if it has none.
func (k *keyed[S]) get(key string) *S {
	s := k.lookup(key)
	if s == nil {
		s = new(S)
		k.add(key, s)
	}
	return s
}
