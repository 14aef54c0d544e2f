package deploy

import (
	"os"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// claimProblem says what is wrong with a PersistentVolumeClaim's access
// modes, or "". Most clusters' default storage classes offer only
// ReadWriteOnce, and a claim asking for more stays Pending: a claim asks
// for ReadWriteMany (or ReadOnlyMany) only with the storageClassName of a
// class that offers it, which only the operator's overlay can name.
func claimProblem(pvc *corev1.PersistentVolumeClaim) string {
	modes := pvc.Spec.AccessModes
	if len(modes) == 0 {
		return "no accessModes"
	}
	if slices.Equal(modes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}) {
		return ""
	}
	if pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName == "" {
		return "accessModes " + modesText(modes) + " with the default storage class, which most clusters make ReadWriteOnce only: the claim would stay Pending; ask for ReadWriteOnce, or name a class that offers these modes (storageClassName)"
	}
	return ""
}

func modesText(modes []corev1.PersistentVolumeAccessMode) string {
	s := ""
	for i, m := range modes {
		if i > 0 {
			s += ","
		}
		s += string(m)
	}
	return "[" + s + "]"
}

func TestClaimProblem(t *testing.T) {
	class := func(s string) *string { return &s }
	for _, tc := range []struct {
		name  string
		modes []corev1.PersistentVolumeAccessMode
		class *string
		bad   bool
	}{
		{"ReadWriteOnce, default class", []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, nil, false},
		{"ReadWriteOnce, a class", []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, class("standard"), false},
		{"ReadWriteMany, default class", []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, nil, true},
		{"ReadWriteMany, empty class", []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, class(""), true},
		{"ReadOnlyMany, default class", []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany}, nil, true},
		{"both, default class", []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadWriteMany}, nil, true},
		{"ReadWriteMany, the overlay's class", []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, class("nfs-client"), false},
		{"no modes", nil, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pvc := &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{AccessModes: tc.modes, StorageClassName: tc.class}}
			if got := claimProblem(pvc); (got != "") != tc.bad {
				t.Errorf("claimProblem(%v, class %v) = %q, want a problem: %v", tc.modes, tc.class, got, tc.bad)
			}
		})
	}
}

// sharesNode reports whether a pod template prefers the node of the other
// bulkload pods, as pods mounting one ReadWriteOnce volume at once must.
func sharesNode(spec *corev1.PodSpec) bool {
	if spec.Affinity == nil || spec.Affinity.PodAffinity == nil {
		return false
	}
	for _, w := range spec.Affinity.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		term := w.PodAffinityTerm
		if term.TopologyKey == "kubernetes.io/hostname" && term.LabelSelector != nil &&
			term.LabelSelector.MatchLabels["app.kubernetes.io/name"] == "bulkload" && w.Weight > 0 {
			return true
		}
	}
	return false
}

// TestClaimsBindOnDefaultClasses: the rendered claims ask for ReadWriteOnce
// unless an overlay names a storage class (they were ReadWriteMany with no
// class, and stayed Pending on most clusters' default classes). A
// ReadWriteOnce volume is attached to one node at a time, so every pod
// template that mounts one prefers the node of the other bulkload pods (a
// backfill's shards and a night's run at once); and an overlay that names
// a ReadWriteMany class passes.
func TestClaimsBindOnDefaultClasses(t *testing.T) {
	objs := loadManifests(t)
	rwo := map[string]bool{}
	n := 0
	for _, o := range objs {
		pvc, ok := o.obj.(*corev1.PersistentVolumeClaim)
		if !ok {
			continue
		}
		n++
		if p := claimProblem(pvc); p != "" {
			t.Errorf("%s PersistentVolumeClaim %s: %s", o.file, o.name, p)
		}
		if slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteOnce) {
			rwo[o.name] = true
		}
	}
	if n < 2 {
		t.Fatalf("%d claims rendered, want the inbox and the results", n)
	}
	for where, spec := range podSpecs(objs) {
		for _, v := range spec.Volumes {
			if v.PersistentVolumeClaim != nil && rwo[v.PersistentVolumeClaim.ClaimName] && !sharesNode(spec) {
				t.Errorf("%s mounts the ReadWriteOnce claim %s without preferring the node of the other bulkload pods (podAffinity on app.kubernetes.io/name=bulkload, kubernetes.io/hostname)", where, v.PersistentVolumeClaim.ClaimName)
			}
		}
	}

	// deploy/README.md's ReadWriteMany overlay of k8s/shared passes.
	root := withPartner(t, "zeta")
	rwx := root + "/k8s/shared-rwx"
	if err := os.MkdirAll(rwx, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rwx+"/kustomization.yaml", []byte(readmeRWXOverlay(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := render(rwx)
	if err != nil {
		t.Fatalf("kustomize build of deploy/README.md's ReadWriteMany overlay: %v", err)
	}
	claims := 0
	for _, doc := range splitDocs(b) {
		obj, _, err := decodeStrict(doc)
		if err != nil {
			t.Fatal(err)
		}
		if pvc, ok := obj.(*corev1.PersistentVolumeClaim); ok {
			claims++
			if !slices.Equal(pvc.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}) || claimProblem(pvc) != "" {
				t.Errorf("the README's overlay renders claim %s with modes %v, class %v: want ReadWriteMany with a class", pvc.Name, pvc.Spec.AccessModes, pvc.Spec.StorageClassName)
			}
		}
	}
	if claims != 2 {
		t.Errorf("the README's overlay renders %d claims, want 2", claims)
	}
}

// readmeRWXOverlay returns the kustomization.yaml deploy/README.md gives
// for claims on a ReadWriteMany class.
func readmeRWXOverlay(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	const start = "```yaml\n# k8s/shared-rwx/kustomization.yaml"
	text := string(b)
	i := strings.Index(text, start)
	if i < 0 {
		t.Fatal("deploy/README.md has no ```yaml block starting # k8s/shared-rwx/kustomization.yaml")
	}
	block := text[i+len("```yaml\n"):]
	block = block[:strings.Index(block, "```")]
	var k map[string]any
	if err := yaml.Unmarshal([]byte(block), &k); err != nil {
		t.Fatalf("deploy/README.md's overlay: %v", err)
	}
	return block
}
