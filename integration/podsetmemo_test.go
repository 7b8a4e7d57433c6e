package integration

import "testing"

func TestPodSetMemoIsBounded(t *testing.T) {
	m := newPodSetMemo(2)
	m.put("a", projection{})
	m.put("b", projection{})
	if _, ok := m.get("a"); !ok {
		t.Fatal("a forgotten too early")
	}
	m.put("c", projection{})
	if len(m.entries) > 2 {
		t.Fatalf("%d entries, bound 2", len(m.entries))
	}
	if _, ok := m.get("c"); !ok {
		t.Fatal("the newest entry must be kept")
	}
	var none *podSetMemo
	if _, ok := none.get("a"); ok {
		t.Fatal("a nil memo remembers nothing")
	}
	none.put("a", projection{})
}
