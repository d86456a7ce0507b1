package controlplane

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"
)

// User is one of the static token users.
type User string

const (
	// Admin is in system:masters.
	Admin User = "admin"
	// Viewer may get, list and watch everything, and change nothing.
	Viewer User = "viewer"
	// NoEvict may get, list and watch pods and nodes, and may not create
	// pods/eviction.
	NoEvict User = "noevict"
)

// Users are all the static token users tests may use.
var Users = []User{Admin, Viewer, NoEvict}

// The components' own users (system:masters), kept apart from the test
// users so that the audit log shows only what tests and tools did.
const (
	controllerManager User = "system:kube-controller-manager"
	scheduler         User = "system:kube-scheduler"
	kwokUser          User = "system:kwok"
)

var components = []User{controllerManager, scheduler, kwokUser}

func (cp *ControlPlane) writeCredentials() error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("service account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return fmt.Errorf("service account key: %w", err)
	}
	files := map[string][]byte{
		"sa.key": pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		"sa.pub": pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}),
	}
	cp.tokens = map[User]string{}
	var csv strings.Builder
	for _, u := range append(Users[:len(Users):len(Users)], components...) {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		cp.tokens[u] = hex.EncodeToString(b)
		group := ""
		if u == Admin || slices.Contains(components, u) {
			group = `,"system:masters"`
		}
		fmt.Fprintf(&csv, "%s,%s,%s%s\n", cp.tokens[u], u, u, group)
	}
	files["tokens.csv"] = []byte(csv.String())
	files["audit-policy.yaml"] = []byte(auditPolicy)
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(cp.dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// waitAPIServer waits for the serving certificate and /readyz, then writes
// one kubeconfig per user.
func (cp *ControlPlane) waitAPIServer(ctx context.Context) error {
	certFile := filepath.Join(cp.dir, "certs", "apiserver.crt")
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	err := cp.poll(ctx, "kube-apiserver", func(ctx context.Context) (bool, error) {
		if _, err := os.Stat(certFile); err != nil {
			return false, nil
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, cp.url+"/readyz", nil)
		if err != nil {
			return false, err
		}
		req.Header.Set("Authorization", "Bearer "+cp.tokens[Admin])
		resp, err := insecure.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return err
	}
	if cp.caData, err = os.ReadFile(certFile); err != nil {
		return err
	}
	for _, u := range append(Users[:len(Users):len(Users)], components...) {
		if err := cp.writeKubeconfig(cp.Kubeconfig(u), string(u), cp.tokens[u]); err != nil {
			return err
		}
	}
	return nil
}

// Config is a REST config for user.
func (cp *ControlPlane) Config(user User) *rest.Config {
	return cp.configForToken(cp.tokens[user])
}

func (cp *ControlPlane) configForToken(token string) *rest.Config {
	return &rest.Config{
		Host:            cp.url,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: cp.caData},
		QPS:             200,
		Burst:           400,
	}
}

// Kubeconfig is the path of a kubeconfig file for user.
func (cp *ControlPlane) Kubeconfig(user User) string {
	return filepath.Join(cp.dir, "kubeconfig-"+strings.ReplaceAll(string(user), ":", "-"))
}

func (cp *ControlPlane) writeKubeconfig(path, user, token string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["sentinel"] = &clientcmdapi.Cluster{Server: cp.url, CertificateAuthorityData: cp.caData}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["sentinel"] = &clientcmdapi.Context{Cluster: "sentinel", AuthInfo: user}
	cfg.CurrentContext = "sentinel"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	return nil
}

// TokenKubeconfig mints a token for the ServiceAccount namespace/name
// (TokenRequest, one hour) and writes a kubeconfig that uses it, so that a
// tool runs with exactly the RBAC bound to that account.
func (cp *ControlPlane) TokenKubeconfig(ctx context.Context, namespace, name string) (string, error) {
	expiry := int64(3600)
	tr, err := cp.Clientset(Admin).CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token for serviceaccount %s/%s: %w", namespace, name, err)
	}
	f, err := os.CreateTemp(cp.dir, "kubeconfig-sa-"+namespace+"-"+name+"-")
	if err != nil {
		return "", err
	}
	f.Close()
	return f.Name(), cp.writeKubeconfig(f.Name(), "system:serviceaccount:"+namespace+":"+name, tr.Status.Token)
}

// setupUsers binds the limited users' permissions.
func (cp *ControlPlane) setupUsers(ctx context.Context) error {
	rbac := cp.Clientset(Admin).RbacV1()
	read := []string{"get", "list", "watch"}
	roles := map[User][]rbacv1.PolicyRule{
		Viewer:  {{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: read}},
		NoEvict: {{APIGroups: []string{""}, Resources: []string{"pods", "nodes"}, Verbs: read}},
	}
	for user, rules := range roles {
		name := "sentinel-test-" + string(user)
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
		if _, err := rbac.ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("rbac for %s: %w", user, err)
		}
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: string(user)}},
		}
		if _, err := rbac.ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("rbac for %s: %w", user, err)
		}
	}
	return nil
}

// BindServiceAccount creates ServiceAccount namespace/name, binds it to
// ClusterRole clusterRole (and nothing else), and returns a kubeconfig with a
// fresh token for it, so that a tool runs with exactly a shipped role.
func (cp *ControlPlane) BindServiceAccount(ctx context.Context, namespace, name, clusterRole string) (string, error) {
	admin := cp.Clientset(Admin)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	if _, err := admin.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("serviceaccount %s/%s: %w", namespace, name, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: clusterRole + "-" + namespace + "-" + name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: namespace}},
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("bind %s/%s to %s: %w", namespace, name, clusterRole, err)
	}
	if err := cp.waitBound(ctx, namespace, name, clusterRole); err != nil {
		return "", err
	}
	return cp.TokenKubeconfig(ctx, namespace, name)
}

// BindTimeout bounds how long BindServiceAccount waits for a new binding to
// reach the API server's authorizer (its RBAC cache is filled by a watch).
const BindTimeout = 30 * time.Second

// waitBound returns once the authorizer allows the service account the
// first rule of clusterRole (a SubjectAccessReview every 100ms, for at most
// BindTimeout), so that the account's first request is answered by the
// binding, not by a cache that has not seen it yet. This is the one place
// tests wait for RBAC.
func (cp *ControlPlane) waitBound(ctx context.Context, namespace, name, clusterRole string) error {
	admin := cp.Clientset(Admin)
	role, err := admin.RbacV1().ClusterRoles().Get(ctx, clusterRole, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("clusterrole %s: %w", clusterRole, err)
	}
	attrs := firstRule(role.Rules)
	if attrs == nil {
		return nil // a role that grants nothing: nothing to wait for
	}
	user := "system:serviceaccount:" + namespace + ":" + name
	var last string
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, BindTimeout, true, func(ctx context.Context) (bool, error) {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               user,
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
			ResourceAttributes: attrs,
		}}
		got, err := admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		last = got.Status.Reason
		return got.Status.Allowed, nil
	})
	if err != nil {
		return fmt.Errorf("binding of %s to %s not effective within %s (%s): %w", user, clusterRole, BindTimeout, last, err)
	}
	return nil
}

// firstRule is the access the first resource rule grants, as review
// attributes; nil when the role has no resource rule.
func firstRule(rules []rbacv1.PolicyRule) *authorizationv1.ResourceAttributes {
	for _, r := range rules {
		if len(r.Verbs) == 0 || len(r.Resources) == 0 || len(r.APIGroups) == 0 {
			continue
		}
		resource, sub, _ := strings.Cut(r.Resources[0], "/")
		attrs := &authorizationv1.ResourceAttributes{Verb: r.Verbs[0], Group: r.APIGroups[0], Resource: resource, Subresource: sub}
		if len(r.ResourceNames) > 0 {
			attrs.Name = r.ResourceNames[0]
		}
		return attrs
	}
	return nil
}

// ApplyClusterRole applies the shipped ClusterRole manifest at path (one
// document, strictly a ClusterRole) and returns it.
func (cp *ControlPlane) ApplyClusterRole(ctx context.Context, path string) (*rbacv1.ClusterRole, error) {
	manifest, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(manifest, &role); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if role.Kind != "ClusterRole" || role.Name == "" {
		return nil, fmt.Errorf("%s: want one named ClusterRole, have %s %q", path, role.Kind, role.Name)
	}
	if err := cp.Apply(ctx, manifest, nil); err != nil {
		return nil, err
	}
	return &role, nil
}
