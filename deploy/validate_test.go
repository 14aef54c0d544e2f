package deploy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // time zones from the Go release, not from the machine

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validate checks what strict decoding cannot: the values the API server
// refuses although they have the right type. It follows the API server's
// rules for object names and labels (k8s.io/apimachinery's validation), a
// CronJob's schedule (robfig/cron's standard parser, which the CronJob
// controller uses, and no TZ= in it) and time zone (an IANA name the Go
// time package knows, not "Local"), and the names of containers and
// volumes (DNS labels). It is a subset: `kubectl apply --dry-run=server`
// is the whole.
func validate(o object) error {
	var errs field.ErrorList
	meta := func(m *metav1.ObjectMeta, p *field.Path) {
		errs = append(errs, apivalidation.ValidateObjectMeta(m, false, apivalidation.NameIsDNSSubdomain, p)...)
	}
	pod := func(spec *corev1.PodSpec, labels map[string]string, p *field.Path) {
		errs = append(errs, metav1validation.ValidateLabels(labels, p.Child("metadata", "labels"))...)
		for i, c := range spec.Containers {
			for _, msg := range validation.IsDNS1123Label(c.Name) {
				errs = append(errs, field.Invalid(p.Child("spec", "containers").Index(i).Child("name"), c.Name, msg))
			}
		}
		for i, v := range spec.Volumes {
			for _, msg := range validation.IsDNS1123Label(v.Name) {
				errs = append(errs, field.Invalid(p.Child("spec", "volumes").Index(i).Child("name"), v.Name, msg))
			}
		}
	}
	switch v := o.obj.(type) {
	case *batchv1.CronJob:
		meta(&v.ObjectMeta, field.NewPath("metadata"))
		// The controller names each Job <cronjob>-<minutes since epoch>,
		// 11 more characters, and a Job's name is a label value (63).
		if len(v.Name) > 52 {
			errs = append(errs, field.TooLong(field.NewPath("metadata", "name"), v.Name, 52))
		}
		if strings.Contains(v.Spec.Schedule, "TZ=") {
			errs = append(errs, field.Invalid(field.NewPath("spec", "schedule"), v.Spec.Schedule, "TZ= is not allowed in a schedule: use spec.timeZone"))
		} else if _, err := cron.ParseStandard(v.Spec.Schedule); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("spec", "schedule"), v.Spec.Schedule, err.Error()))
		}
		if tz := v.Spec.TimeZone; tz != nil {
			if _, err := time.LoadLocation(*tz); err != nil || *tz == "" || strings.EqualFold(*tz, "Local") {
				errs = append(errs, field.Invalid(field.NewPath("spec", "timeZone"), *tz, "unknown time zone: want an IANA name such as Etc/UTC or Europe/Berlin"))
			}
		}
		t := v.Spec.JobTemplate.Spec.Template
		pod(&t.Spec, t.Labels, field.NewPath("spec", "jobTemplate", "spec", "template"))
	case *batchv1.Job:
		meta(&v.ObjectMeta, field.NewPath("metadata"))
		// An Indexed Job's pods are named and hostnamed <job>-<index>.
		for _, msg := range validation.IsDNS1123Label(v.Name) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), v.Name, msg))
		}
		t := v.Spec.Template
		pod(&t.Spec, t.Labels, field.NewPath("spec", "template"))
	case *corev1.ConfigMap:
		meta(&v.ObjectMeta, field.NewPath("metadata"))
	case *corev1.PersistentVolumeClaim:
		meta(&v.ObjectMeta, field.NewPath("metadata"))
	case *networkingv1.NetworkPolicy:
		meta(&v.ObjectMeta, field.NewPath("metadata"))
		errs = append(errs, metav1validation.ValidateLabelSelector(&v.Spec.PodSelector, metav1validation.LabelSelectorValidationOptions{}, field.NewPath("spec", "podSelector"))...)
	default:
		errs = append(errs, field.NotSupported(field.NewPath("kind"), o.kind, []string{"CronJob", "Job", "ConfigMap", "PersistentVolumeClaim", "NetworkPolicy"}))
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%s %s %s: %w", o.file, o.kind, o.name, errs.ToAggregate())
}

func TestObjectsValid(t *testing.T) {
	for _, o := range loadManifests(t) {
		if err := validate(o); err != nil {
			t.Error(err)
		}
	}
}

// TestValidateCatches: the mistakes strict decoding lets through (the
// right type, a wrong value) fail validate: the rendered nightly CronJob
// and backfill Job, each with one mistake.
func TestValidateCatches(t *testing.T) {
	var cj *batchv1.CronJob
	var job *batchv1.Job
	var cjObj, jobObj object
	for _, o := range loadManifests(t) {
		switch v := o.obj.(type) {
		case *batchv1.CronJob:
			cj, cjObj = v, o
		case *batchv1.Job:
			job, jobObj = v, o
		}
	}
	if cj == nil || job == nil {
		t.Fatal("no CronJob or no Job rendered")
	}
	if err := validate(cjObj); err != nil {
		t.Fatalf("validate(rendered CronJob) = %v, want nil", err)
	}
	for _, tc := range []struct {
		name   string
		job    bool
		mutate func(cj *batchv1.CronJob, job *batchv1.Job)
	}{
		{name: "schedule hour 25", mutate: func(cj *batchv1.CronJob, _ *batchv1.Job) { cj.Spec.Schedule = "30 25 * * *" }},
		{name: "schedule of six fields", mutate: func(cj *batchv1.CronJob, _ *batchv1.Job) { cj.Spec.Schedule = "0 30 2 * * *" }},
		{name: "TZ in the schedule", mutate: func(cj *batchv1.CronJob, _ *batchv1.Job) { cj.Spec.Schedule = "CRON_TZ=UTC 30 2 * * *" }},
		{name: "bogus timeZone", mutate: func(cj *batchv1.CronJob, _ *batchv1.Job) { tz := "Mars/Olympus_Mons"; cj.Spec.TimeZone = &tz }},
		{name: "timeZone Local", mutate: func(cj *batchv1.CronJob, _ *batchv1.Job) { tz := "Local"; cj.Spec.TimeZone = &tz }},
		{name: "CronJob name with an underscore", mutate: func(cj *batchv1.CronJob, _ *batchv1.Job) { cj.Name = "bulkload_acme" }},
		{name: "CronJob name in capitals", mutate: func(cj *batchv1.CronJob, _ *batchv1.Job) { cj.Name = "Bulkload-ACME" }},
		{name: "CronJob name too long for its Jobs", mutate: func(cj *batchv1.CronJob, _ *batchv1.Job) { cj.Name = "bulkload-" + strings.Repeat("a", 50) }},
		{name: "label value with a space", mutate: func(cj *batchv1.CronJob, _ *batchv1.Job) {
			cj.Spec.JobTemplate.Spec.Template.Labels["bulkload/partner"] = "acme corp"
		}},
		{name: "volume name with a dot", mutate: func(cj *batchv1.CronJob, _ *batchv1.Job) {
			cj.Spec.JobTemplate.Spec.Template.Spec.Volumes[0].Name = "config.v2"
		}},
		{name: "Job name with a dot (pod hostnames)", job: true, mutate: func(_ *batchv1.CronJob, job *batchv1.Job) { job.Name = "bulkload.backfill" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := cjObj
			c, j := cj.DeepCopy(), job.DeepCopy()
			tc.mutate(c, j)
			o.obj = c
			if tc.job {
				o = jobObj
				o.obj = j
			}
			if err := validate(o); err == nil {
				t.Errorf("validate(%s) = nil, want an error", tc.name)
			}
		})
	}
}

// TestImagesPinnedByDigest: every container's image is name@sha256:...; a
// tag can be moved to another build, a digest cannot.
func TestImagesPinnedByDigest(t *testing.T) {
	re := regexp.MustCompile(`^[a-z0-9.-]+(:[0-9]+)?/[a-z0-9._/-]+@sha256:[0-9a-f]{64}$`)
	for where, spec := range podSpecs(loadManifests(t)) {
		for _, c := range spec.Containers {
			if !re.MatchString(c.Image) {
				t.Errorf("%s container %s: image %q is not registry/name@sha256:<64 hex>", where, c.Name, c.Image)
			}
		}
	}
}

// TestNetworkPolicy: a NetworkPolicy selects every pod of the Jobs (they
// hold partners' personal data), refuses all ingress, and allows egress
// only on named ports, never to any address (0.0.0.0/0).
func TestNetworkPolicy(t *testing.T) {
	objs := loadManifests(t)
	var policies []*networkingv1.NetworkPolicy
	for _, o := range objs {
		if v, ok := o.obj.(*networkingv1.NetworkPolicy); ok {
			policies = append(policies, v)
		}
	}
	if len(policies) == 0 {
		t.Fatal("no NetworkPolicy")
	}
	for _, o := range objs {
		var labels map[string]string
		switch v := o.obj.(type) {
		case *batchv1.CronJob:
			labels = v.Spec.JobTemplate.Spec.Template.Labels
		case *batchv1.Job:
			labels = v.Spec.Template.Labels
		default:
			continue
		}
		selected := false
		for _, p := range policies {
			sel, err := metav1.LabelSelectorAsSelector(&p.Spec.PodSelector)
			if err != nil {
				t.Fatal(err)
			}
			if sel.Matches(k8slabels.Set(labels)) && slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
				selected = true
			}
		}
		if !selected {
			t.Errorf("%s %s: its pods (labels %v) are selected by no NetworkPolicy with Egress", o.file, o.name, labels)
		}
	}
	for _, p := range policies {
		if !slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) || len(p.Spec.Ingress) > 0 {
			t.Errorf("NetworkPolicy %s: want all ingress refused (policyTypes Ingress, no ingress rules)", p.Name)
		}
		for i, r := range p.Spec.Egress {
			if len(r.Ports) == 0 || len(r.To) == 0 {
				t.Errorf("NetworkPolicy %s egress rule %d: no ports or no peers: it allows too much", p.Name, i)
			}
			for _, peer := range r.To {
				if b := peer.IPBlock; b != nil && (b.CIDR == "0.0.0.0/0" || b.CIDR == "::/0") {
					t.Errorf("NetworkPolicy %s egress rule %d: %s is anywhere", p.Name, i, b.CIDR)
				}
			}
		}
	}
}
