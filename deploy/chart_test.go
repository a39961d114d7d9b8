package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

const chartDir = "helm/otlp-lite"

// objects is one rendering of the chart, decoded strictly.
type objects struct {
	sts        *appsv1.StatefulSet
	services   map[string]*corev1.Service
	pdb        *policyv1.PodDisruptionBudget
	configMaps map[string]*corev1.ConfigMap
}

// decodeStrict decodes one YAML document into a k8s.io/api object: a
// duplicate key or a field the type does not have fails (a typo such as
// readinesProbe, or a field at the wrong level, is an error, not ignored
// as the API server's lenient decoding would).
func decodeStrict(doc string, into any) error {
	js, err := yaml.YAMLToJSONStrict([]byte(doc))
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the object")
	}
	return nil
}

// decodeAll decodes every object of a rendering into its type by its
// apiVersion and kind; an object of any other kind fails.
func decodeAll(t *testing.T, rendered []Rendered) objects {
	t.Helper()
	o := objects{services: map[string]*corev1.Service{}, configMaps: map[string]*corev1.ConfigMap{}}
	for _, r := range rendered {
		for _, doc := range Documents(r.Content) {
			var tm struct{ APIVersion, Kind string }
			if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
				t.Fatalf("%s: %v", r.Name, err)
			}
			var obj any
			switch tm.APIVersion + " " + tm.Kind {
			case "apps/v1 StatefulSet":
				if o.sts != nil {
					t.Fatalf("%s: a second StatefulSet", r.Name)
				}
				o.sts = &appsv1.StatefulSet{}
				obj = o.sts
			case "v1 Service":
				obj = &corev1.Service{}
			case "policy/v1 PodDisruptionBudget":
				o.pdb = &policyv1.PodDisruptionBudget{}
				obj = o.pdb
			case "v1 ConfigMap":
				obj = &corev1.ConfigMap{}
			default:
				t.Fatalf("%s: unexpected object %s %s", r.Name, tm.APIVersion, tm.Kind)
			}
			if err := decodeStrict(doc, obj); err != nil {
				t.Fatalf("%s: %s %s does not decode strictly: %v", r.Name, tm.APIVersion, tm.Kind, err)
			}
			switch v := obj.(type) {
			case *corev1.Service:
				o.services[v.Name] = v
			case *corev1.ConfigMap:
				o.configMaps[v.Name] = v
			}
		}
	}
	if o.sts == nil {
		t.Fatal("no StatefulSet rendered")
	}
	return o
}

func TestDecodeStrictRefusesUnknownFields(t *testing.T) {
	var s corev1.Service
	if err := decodeStrict("apiVersion: v1\nkind: Service\nspec:\n  typo: 1\n", &s); err == nil {
		t.Error("an unknown field decoded")
	}
	if err := decodeStrict("apiVersion: v1\nkind: Service\nkind: Service\n", &s); err == nil {
		t.Error("a duplicate key decoded")
	}
}

// serveFlags returns the environment variable of every serve flag, from
// docs/flags.md's "### `serve`" section (TestDocsNameEveryFlag in
// cmd/otlp-lite holds it equal to `otlp-lite serve -h`, Kafka flags
// included).
func serveFlags(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../docs/flags.md")
	if err != nil {
		t.Fatal(err)
	}
	start := bytes.Index(b, []byte("### `serve`"))
	end := bytes.Index(b, []byte("### `export`"))
	if start < 0 || end < start {
		t.Fatal("docs/flags.md: no serve section")
	}
	row := regexp.MustCompile("(?m)^\\| `-([a-z0-9-]+)` \\|.*?\\| `(OTLP_LITE_[A-Z0-9_]+)` \\|")
	flags := map[string]bool{}
	for _, m := range row.FindAllSubmatch(b[start:end], -1) {
		if want := "OTLP_LITE_" + strings.ToUpper(strings.ReplaceAll(string(m[1]), "-", "_")); want != string(m[2]) {
			t.Fatalf("docs/flags.md: -%s has variable %s, want %s", m[1], m[2], want)
		}
		flags[string(m[2])] = true
	}
	if rows := regexp.MustCompile("(?m)^\\| `-").FindAll(b[start:end], -1); len(flags) < 50 || len(flags) != len(rows) {
		t.Fatalf("docs/flags.md: %d serve flags with a variable in %d rows", len(flags), len(rows))
	}
	return flags
}

// imageUser returns the uid and gid of the image's user: the Dockerfile's
// USER, which scripts/image/rootfs/etc/passwd must name.
func imageUser(t *testing.T) (uid, gid int64) {
	t.Helper()
	df, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^USER (\d+):(\d+)$`).FindSubmatch(df)
	if m == nil {
		t.Fatal("Dockerfile: no USER uid:gid")
	}
	uid, _ = strconv.ParseInt(string(m[1]), 10, 64)
	gid, _ = strconv.ParseInt(string(m[2]), 10, 64)
	passwd, err := os.ReadFile("../scripts/image/rootfs/etc/passwd")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(passwd), fmt.Sprintf(":%d:%d:", uid, gid)) {
		t.Fatalf("the image's passwd names no user %d:%d", uid, gid)
	}
	if uid == 0 {
		t.Fatal("the image runs as root")
	}
	return uid, gid
}

// memoryModel is docs/limits.md's memory model for the settings in env,
// computed here independently of the chart's template arithmetic:
// heap = -memory-limit auto, worst = the model's worst case.
func memoryModel(t *testing.T, env map[string]string) (heap, worst int64) {
	t.Helper()
	num := func(name string) int64 {
		v, ok := env[name]
		if !ok {
			t.Fatalf("the chart does not set %s: the memory model needs it explicit", name)
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", name, v, err)
		}
		return n
	}
	const KiB, MiB = 1 << 10, 1 << 20
	r, w := num("OTLP_LITE_ADMISSION_REQUEST_LIMIT"), num("OTLP_LITE_ADMISSION_WAITING_LIMIT")
	c, h, f := num("OTLP_LITE_MAX_CONNECTIONS"), num("OTLP_LITE_MAX_HEADER_BYTES"), num("OTLP_LITE_HTTP2_MAX_FRAME_SIZE")
	for _, derived := range []string{"OTLP_LITE_MAX_STREAMS", "OTLP_LITE_HTTP2_CONN_WINDOW", "OTLP_LITE_HTTP2_STREAM_WINDOW", "OTLP_LITE_MEMORY_LIMIT"} {
		if _, ok := env[derived]; ok {
			t.Fatalf("the chart sets %s, which its memory model takes as derived", derived)
		}
	}
	s := max(r/(32*KiB), 4096)           // -max-streams 0
	win := min(max(r/c, 256*KiB), 4*MiB) // server.WindowFor
	var k int64                          // Kafka's buffers
	if env["OTLP_LITE_STORAGE"] == "kafka" {
		k += num("OTLP_LITE_KAFKA_MAX_BUFFERED_BYTES")
	}
	if env["OTLP_LITE_KAFKA_CONSUME"] != "" {
		brokers := int64(3) // kafka.consumeClusterBrokers in the examples and defaults
		k += num("OTLP_LITE_KAFKA_CONSUME_MAX_DECOMPRESSED_BYTES") + brokers*num("OTLP_LITE_KAFKA_CONSUME_FETCH_MAX_BYTES")
	}
	if env["OTLP_LITE_SELF_TELEMETRY_ENDPOINT"] == "self" {
		k += 4 * MiB // service.selfReserve
	}
	heap = 2*(r+w) + 48*MiB + k
	worst = r + w + s*(32*KiB+h) + c*(win+f+148*KiB) + 48*MiB + k
	return heap, worst
}

// checkInvariants checks what every rendering must hold, whatever the
// values: probes, security, the environment, resources, grace period,
// volumes and Services that agree with the pod.
func checkInvariants(t *testing.T, o objects, flags map[string]bool) {
	t.Helper()
	sts := o.sts
	pod := sts.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]

	// Ports by name, as the probes and Services name them.
	port := map[string]int32{}
	for _, p := range c.Ports {
		port[p.Name] = p.ContainerPort
	}
	for _, name := range []string{"otlp-grpc", "otlp-http", "admin"} {
		if port[name] == 0 {
			t.Errorf("container has no port %s", name)
		}
	}

	// The environment: every variable is a serve flag's, once.
	env := map[string]string{}
	for _, e := range c.Env {
		if !flags[e.Name] {
			t.Errorf("env %s is not the variable of any serve flag (docs/flags.md)", e.Name)
		}
		if _, dup := env[e.Name]; dup {
			t.Errorf("env %s set twice", e.Name)
		}
		env[e.Name] = e.Value
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef == nil && e.ValueFrom.FieldRef == nil {
			t.Errorf("env %s: only Secrets and the pod's fields are sources", e.Name)
		}
	}
	if len(c.Args) != 1 || c.Args[0] != "serve" || len(c.Command) != 0 {
		t.Errorf("container runs %q %q, want the image's entrypoint with [serve]: settings belong in the environment", c.Command, c.Args)
	}
	if pod.EnableServiceLinks == nil || *pod.EnableServiceLinks {
		t.Error("enableServiceLinks is not false: Service link variables of a Service named otlp-lite* would be OTLP_LITE_*")
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Error("the service account token is mounted: the receiver does not use the API")
	}
	listenPort := func(name string) int32 {
		v := env[name]
		i := strings.LastIndex(v, ":")
		p, err := strconv.Atoi(v[i+1:])
		if i < 0 || err != nil {
			t.Fatalf("%s=%q: not host:port", name, v)
		}
		if host := v[:i]; host != "" && host != "0.0.0.0" && host != "[::]" {
			t.Errorf("%s=%q listens on one address: the kubelet and Services reach the pod IP", name, v)
		}
		return int32(p)
	}
	if listenPort("OTLP_LITE_GRPC_ADDR") != port["otlp-grpc"] || listenPort("OTLP_LITE_HTTP_ADDR") != port["otlp-http"] || listenPort("OTLP_LITE_ADMIN_ADDR") != port["admin"] {
		t.Errorf("listeners %s %s %s do not match the container ports %v", env["OTLP_LITE_GRPC_ADDR"], env["OTLP_LITE_HTTP_ADDR"], env["OTLP_LITE_ADMIN_ADDR"], port)
	}

	// Probes: liveness and startup on gRPC health with the empty service
	// (the server's overall health, which our Check answers SERVING until
	// shutdown: interop's TestHealth), readiness on /readyz of the admin port.
	// With TLS on the OTLP listeners, or the PROXY protocol (the kubelet
	// sends neither), both on /healthz of the admin port instead.
	for name, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "startup": c.StartupProbe} {
		if env["OTLP_LITE_TLS_CERT"] != "" || env["OTLP_LITE_PROXY_PROTOCOL_TRUSTED_CIDRS"] != "" {
			if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port != intstr.FromString("admin") {
				t.Errorf("%s probe %+v with TLS or PROXY on the OTLP listeners, want GET /healthz on the admin port", name, p)
			}
			continue
		}
		if p == nil || p.GRPC == nil {
			t.Errorf("%s probe is not a gRPC probe", name)
			continue
		}
		if p.GRPC.Port != port["otlp-grpc"] {
			t.Errorf("%s probe on port %d, want the OTLP gRPC port %d", name, p.GRPC.Port, port["otlp-grpc"])
		}
		if p.GRPC.Service != nil && *p.GRPC.Service != "" {
			t.Errorf("%s probe asks for service %q, want the server's health (\"\")", name, *p.GRPC.Service)
		}
	}
	if r := c.ReadinessProbe; r == nil || r.HTTPGet == nil || r.HTTPGet.Path != "/readyz" || r.HTTPGet.Port != intstr.FromString("admin") {
		t.Errorf("readiness probe %+v, want GET /readyz on the admin port", r)
	}

	// Security: the image's non-root user, nothing else.
	uid, gid := imageUser(t)
	ps := pod.SecurityContext
	if ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot || ps.RunAsUser == nil || *ps.RunAsUser != uid ||
		ps.RunAsGroup == nil || *ps.RunAsGroup != gid || ps.FSGroup == nil || *ps.FSGroup != gid {
		t.Errorf("pod securityContext %+v, want non-root as the image's %d:%d with fsGroup %d", ps, uid, gid, gid)
	}
	if ps == nil || ps.SeccompProfile == nil || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Error("pod seccompProfile is not RuntimeDefault")
	}
	cs := c.SecurityContext
	if cs == nil || cs.ReadOnlyRootFilesystem == nil || !*cs.ReadOnlyRootFilesystem ||
		cs.AllowPrivilegeEscalation == nil || *cs.AllowPrivilegeEscalation ||
		cs.RunAsNonRoot == nil || !*cs.RunAsNonRoot ||
		cs.Capabilities == nil || !slices.Equal(cs.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(cs.Capabilities.Add) != 0 ||
		cs.Privileged != nil && *cs.Privileged {
		t.Errorf("container securityContext %+v, want read-only root, no privilege escalation, all capabilities dropped", cs)
	}

	// The log: a claim template mounted at the data directory, the only
	// writable path; retention below the claim's size.
	if len(sts.Spec.VolumeClaimTemplates) != 1 {
		t.Fatalf("%d volumeClaimTemplates, want 1 (the log)", len(sts.Spec.VolumeClaimTemplates))
	}
	claim := sts.Spec.VolumeClaimTemplates[0]
	var dataMount *corev1.VolumeMount
	for i, m := range c.VolumeMounts {
		if m.Name == claim.Name {
			dataMount = &c.VolumeMounts[i]
		} else if !m.ReadOnly {
			t.Errorf("volume %s is mounted writable: only the log is written", m.Name)
		}
	}
	if dataMount == nil || dataMount.MountPath != env["OTLP_LITE_DATA_DIR"] {
		t.Errorf("the claim %s is not mounted at OTLP_LITE_DATA_DIR=%q", claim.Name, env["OTLP_LITE_DATA_DIR"])
	}
	size := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	if maxBytes := parseSize(t, env["OTLP_LITE_STORAGE_MAX_BYTES"]); maxBytes <= 0 || maxBytes >= size.Value() {
		t.Errorf("OTLP_LITE_STORAGE_MAX_BYTES=%s is not below the volume's %s: the log would fill it", env["OTLP_LITE_STORAGE_MAX_BYTES"], size.String())
	}
	for _, v := range pod.Volumes {
		if v.ConfigMap != nil && o.configMaps[v.ConfigMap.Name] == nil {
			t.Errorf("volume %s names ConfigMap %s, which the chart does not render", v.Name, v.ConfigMap.Name)
		}
		if v.HostPath != nil || v.EmptyDir != nil {
			t.Errorf("volume %s is not a ConfigMap, Secret or the claim", v.Name)
		}
	}

	// Graceful stop: the kubelet's SIGKILL comes after -shutdown-timeout,
	// with room to sync and close the log.
	shutdown, err := time.ParseDuration(env["OTLP_LITE_SHUTDOWN_TIMEOUT"])
	if err != nil {
		t.Fatalf("OTLP_LITE_SHUTDOWN_TIMEOUT: %v", err)
	}
	if g := pod.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second < shutdown+5*time.Second {
		t.Errorf("terminationGracePeriodSeconds %v is not -shutdown-timeout %v plus at least 5 s to close the log", g, shutdown)
	}

	// Resources from the memory model, unless the values set them.
	heap, worst := memoryModel(t, env)
	req, lim := c.Resources.Requests[corev1.ResourceMemory], c.Resources.Limits[corev1.ResourceMemory]
	roundMiB := func(n int64) int64 { return (n + 1<<20 - 1) >> 20 << 20 }
	if req.Value() != roundMiB(heap) || lim.Value() != roundMiB(worst) {
		t.Errorf("memory request %s limit %s, want the memory model's %dMi and %dMi", req.String(), lim.String(), roundMiB(heap)>>20, roundMiB(worst)>>20)
	}
	if _, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
		t.Error("a CPU limit: a throttled receiver answers late and clients resend")
	}

	// Services and the PDB select the pod; their ports are the pod's.
	podLabels := sts.Spec.Template.Labels
	selects := func(sel map[string]string) bool {
		for k, v := range sel {
			if podLabels[k] != v {
				return false
			}
		}
		return len(sel) > 0
	}
	for k, v := range sts.Spec.Selector.MatchLabels {
		if podLabels[k] != v {
			t.Errorf("StatefulSet selector %s=%s does not match its pods", k, v)
		}
	}
	if o.services[sts.Spec.ServiceName] == nil || o.services[sts.Spec.ServiceName].Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("serviceName %s is not a rendered headless Service", sts.Spec.ServiceName)
	}
	seen := map[string]bool{}
	for name, s := range o.services {
		if !selects(s.Spec.Selector) {
			t.Errorf("Service %s does not select the pods", name)
		}
		for _, p := range s.Spec.Ports {
			seen[p.TargetPort.StrVal] = true
			if port[p.TargetPort.StrVal] == 0 || p.Port != port[p.TargetPort.StrVal] {
				t.Errorf("Service %s port %s (%d → %s) is not a container port", name, p.Name, p.Port, p.TargetPort.String())
			}
		}
	}
	for name := range port {
		if !seen[name] {
			t.Errorf("no Service for container port %s", name)
		}
	}
	if o.pdb == nil || o.pdb.Spec.Selector == nil || !selects(o.pdb.Spec.Selector.MatchLabels) {
		t.Error("no PodDisruptionBudget selecting the pods")
	} else if o.pdb.Spec.MaxUnavailable == nil && o.pdb.Spec.MinAvailable == nil {
		t.Error("the PodDisruptionBudget bounds nothing")
	}
}

// parseSize parses a -storage-max-bytes value: bytes, or with a KiB, MiB,
// GiB or TiB suffix.
func parseSize(t *testing.T, v string) int64 {
	t.Helper()
	mult := int64(1)
	for i, suf := range []string{"KiB", "MiB", "GiB", "TiB"} {
		if s, ok := strings.CutSuffix(v, suf); ok {
			v, mult = s, int64(1)<<(10*(i+1))
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("size %q: %v", v, err)
	}
	return n * mult
}

func envOf(o objects) map[string]string {
	env := map[string]string{}
	for _, e := range o.sts.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	return env
}

// TestChartDefault renders the chart with its default values.
func TestChartDefault(t *testing.T) {
	rendered, err := Render(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	o := decodeAll(t, rendered)
	checkInvariants(t, o, serveFlags(t))
	if len(o.services) != 3 || len(o.configMaps) != 0 {
		t.Errorf("%d Services and %d ConfigMaps, want 3 and none", len(o.services), len(o.configMaps))
	}
	// The figures values.yaml quotes.
	c := o.sts.Spec.Template.Spec.Containers[0]
	if req, lim := c.Resources.Requests[corev1.ResourceMemory], c.Resources.Limits[corev1.ResourceMemory]; req.String() != "368Mi" || lim.String() != "1012Mi" {
		t.Errorf("memory request %s limit %s, want 368Mi and 1012Mi as values.yaml says", req.String(), lim.String())
	}
	if g := *o.sts.Spec.Template.Spec.TerminationGracePeriodSeconds; g != 25 {
		t.Errorf("terminationGracePeriodSeconds %d, want 15 s shutdown + 10 s", g)
	}
}

// TestChartExamples renders every documented example values file and
// checks what each is for.
func TestChartExamples(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(chartDir, "examples", "*.yaml"))
	want := []string{"forwarding.yaml", "kafka.yaml", "tenants.yaml"}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	if !slices.Equal(names, want) {
		t.Fatalf("examples %v, want %v (a new one needs its checks here)", names, want)
	}
	flags := serveFlags(t)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			rendered, err := Render(chartDir, f)
			if err != nil {
				t.Fatal(err)
			}
			o := decodeAll(t, rendered)
			checkInvariants(t, o, flags)
			env := envOf(o)
			pod := o.sts.Spec.Template.Spec
			secretEnv := map[string]string{}
			for _, e := range pod.Containers[0].Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					secretEnv[e.Name] = e.ValueFrom.SecretKeyRef.Name
				}
			}
			switch filepath.Base(f) {
			case "tenants.yaml":
				cm := o.configMaps["otlp-lite-tenants"]
				if cm == nil || !strings.Contains(cm.Data["quotas"], "team-a") {
					t.Fatalf("no tenants ConfigMap with the quotas: %v", o.configMaps)
				}
				if env["OTLP_LITE_TENANT_QUOTA_FILE"] != "/etc/otlp-lite/tenants/quotas" || env["OTLP_LITE_AUTH_TOKEN_FILE"] != "/etc/otlp-lite/tokens/tokens" || env["OTLP_LITE_TENANT_REQUIRED"] != "true" {
					t.Errorf("tenant settings %v", env)
				}
				for _, m := range pod.Containers[0].VolumeMounts {
					if m.SubPath != "" {
						t.Errorf("mount %s uses subPath: updates would not reach the pod", m.Name)
					}
				}
			case "forwarding.yaml":
				fw := strings.Fields(env["OTLP_LITE_FORWARD"])
				if len(fw) != 2 || !strings.HasPrefix(fw[0], "otel=grpc://") || !strings.HasPrefix(fw[1], "dc2=streams://") {
					t.Errorf("OTLP_LITE_FORWARD=%q, want the two destinations", env["OTLP_LITE_FORWARD"])
				}
				if env["OTLP_LITE_STORAGE_MAX_AGE"] != "72h" || env["OTLP_LITE_STORAGE_MAX_BYTES"] != "40960MiB" {
					t.Errorf("retention %q %q", env["OTLP_LITE_STORAGE_MAX_AGE"], env["OTLP_LITE_STORAGE_MAX_BYTES"])
				}
			case "kafka.yaml":
				if env["OTLP_LITE_STORAGE"] != "kafka" || env["OTLP_LITE_KAFKA_BROKERS"] == "" || env["OTLP_LITE_KAFKA_CONSUME"] == "" {
					t.Errorf("kafka settings %v", env)
				}
				if secretEnv["OTLP_LITE_KAFKA_SASL_PASSWORD"] != "kafka-sasl" {
					t.Error("the SASL password does not come from the Secret")
				}
				if _, inValues := env["OTLP_LITE_KAFKA_SASL_PASSWORD"]; inValues && env["OTLP_LITE_KAFKA_SASL_PASSWORD"] != "" {
					t.Error("the SASL password is a plain value")
				}
				if !strings.HasSuffix(pod.Containers[0].Image, ":dev-kafka") {
					t.Errorf("image %s: the Kafka settings need the Kafka-capable image", pod.Containers[0].Image)
				}
			}
		})
	}
}

// TestPlainManifestsAreTheDefaultRendering holds deploy/kubernetes equal
// to the chart rendered with its default values (`make deploy-manifests`
// regenerates them).
func TestPlainManifestsAreTheDefaultRendering(t *testing.T) {
	rendered, err := Render(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, r := range rendered {
		want[r.Name] = PlainManifest(r)
	}
	files, _ := filepath.Glob("kubernetes/*.yaml")
	got := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got[filepath.Base(f)] = string(b)
	}
	for name, w := range want {
		if g, ok := got[name]; !ok {
			t.Errorf("kubernetes/%s is missing: run `make deploy-manifests`", name)
		} else if g != w {
			t.Errorf("kubernetes/%s differs from the chart's default rendering (first difference at line %d): run `make deploy-manifests`", name, firstDiffLine(g, w))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("kubernetes/%s is not rendered by the chart: run `make deploy-manifests`", name)
		}
	}
}

func firstDiffLine(a, b string) int {
	sa, sb := bufio.NewScanner(strings.NewReader(a)), bufio.NewScanner(strings.NewReader(b))
	for line := 1; ; line++ {
		ma, mb := sa.Scan(), sb.Scan()
		if !ma || !mb || sa.Text() != sb.Text() {
			return line
		}
	}
}

// TestResourcesFollowTheAdmissionBudget renders with a larger admission
// budget and fewer connections: both memory figures follow the formula
// (checkInvariants), and values.resources, when set, is taken as is.
func TestResourcesFollowTheAdmissionBudget(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	os.WriteFile(big, []byte("memoryModel:\n  admissionRequestLimitMiB: 512\n  maxConnections: 64\nconfig:\n  self-telemetry-endpoint: self\n"), 0o644)
	rendered, err := Render(chartDir, big)
	if err != nil {
		t.Fatal(err)
	}
	o := decodeAll(t, rendered)
	checkInvariants(t, o, serveFlags(t))
	c := o.sts.Spec.Template.Spec.Containers[0]
	// 512 MiB / 64 connections = 8 MiB windows, capped at 4 MiB; 16384 streams.
	// The self-telemetry reserve: 4 MiB. heap 2 × (512 + 32) + 48 + 4 =
	// 1140 MiB; worst 512 + 32 + 16384 × 96 KiB (1536 MiB) + 64 × (4096 +
	// 16 + 148) KiB (266.25 MiB) + 48 + 4 = 2398.25 → 2399 MiB.
	if req, lim := c.Resources.Requests[corev1.ResourceMemory], c.Resources.Limits[corev1.ResourceMemory]; req.String() != "1140Mi" || lim.String() != "2399Mi" {
		t.Errorf("memory request %s limit %s, want 1140Mi and 2399Mi", req.String(), lim.String())
	}

	fixed := filepath.Join(dir, "fixed.yaml")
	os.WriteFile(fixed, []byte("resources:\n  requests: {cpu: \"2\", memory: 1Gi}\n  limits: {memory: 2Gi}\n"), 0o644)
	rendered, err = Render(chartDir, fixed)
	if err != nil {
		t.Fatal(err)
	}
	c = decodeAll(t, rendered).sts.Spec.Template.Spec.Containers[0]
	if lim := c.Resources.Limits[corev1.ResourceMemory]; !lim.Equal(resource.MustParse("2Gi")) {
		t.Errorf("values.resources not taken: limit %s", lim.String())
	}
}

// TestValuesSchema: a misspelt or misplaced key, a forwarding destination
// without a URL, a writable extra mount, an extra variable outside
// OTLP_LITE_* are refused when the chart is rendered (values.schema.json),
// and the TLS set-up values.yaml shows renders and holds the invariants.
func TestValuesSchema(t *testing.T) {
	dir := t.TempDir()
	for name, values := range map[string]string{
		"typo":               "memoryModel:\n  admissionRequestLimitMb: 256\n",
		"misplaced":          "maxConnections: 64\n",
		"no url":             "forwarding:\n  destinations: [{name: otel}]\n",
		"writable mount":     "extraVolumeMounts: [{name: x, mountPath: /x, readOnly: false}]\n",
		"foreign variable":   "extraEnv: [{name: GOMEMLIMIT, value: 1GiB}]\n",
		"bad flag name":      "config:\n  -log-format: json\n",
		"retention too high": "persistence:\n  retentionPercent: 100\n",
	} {
		f := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yaml")
		os.WriteFile(f, []byte(values), 0o644)
		if _, err := Render(chartDir, f); err == nil {
			t.Errorf("%s: %q rendered", name, values)
		} else if !strings.Contains(err.Error(), "schema") {
			t.Errorf("%s: refused, but not by the schema: %v", name, err)
		} else {
			t.Logf("%s: %v", name, strings.ReplaceAll(err.Error(), "\n", " "))
		}
	}

	tls := filepath.Join(dir, "tls.yaml")
	os.WriteFile(tls, []byte(`extraVolumes: [{name: tls, secret: {secretName: otlp-lite-tls}}]
extraVolumeMounts: [{name: tls, mountPath: /etc/otlp-lite/tls, readOnly: true}]
config: {tls-cert: /etc/otlp-lite/tls/tls.crt, tls-key: /etc/otlp-lite/tls/tls.key}
`), 0o644)
	rendered, err := Render(chartDir, tls)
	if err != nil {
		t.Fatal(err)
	}
	o := decodeAll(t, rendered)
	checkInvariants(t, o, serveFlags(t))
	if env := envOf(o); env["OTLP_LITE_TLS_CERT"] != "/etc/otlp-lite/tls/tls.crt" || len(o.sts.Spec.Template.Spec.Volumes) != 1 {
		t.Errorf("TLS values not rendered: %v", env)
	}

	proxy := filepath.Join(dir, "proxy.yaml")
	os.WriteFile(proxy, []byte("config: {proxy-protocol-trusted-cidrs: 10.0.0.0/8}\n"), 0o644)
	rendered, err = Render(chartDir, proxy)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, decodeAll(t, rendered), serveFlags(t))
}
