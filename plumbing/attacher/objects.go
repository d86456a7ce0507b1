package attacher

import (
	"context"
	"crypto/sha256"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// AttachmentName is the name the attach-detach controller gives the
// VolumeAttachment of a CSI volume on a node: "csi-" and the hex SHA-256 of
// the volume handle, the driver and the node name.
func AttachmentName(volumeHandle, driver, node string) string {
	return fmt.Sprintf("csi-%x", sha256.Sum256([]byte(volumeHandle+driver+node)))
}

// AttachedName is how node.status.volumesAttached (and volumesInUse) name
// a CSI volume: "kubernetes.io/csi/<driver>^<volume handle>".
func AttachedName(driver, volumeHandle string) corev1.UniqueVolumeName {
	return corev1.UniqueVolumeName("kubernetes.io/csi/" + driver + "^" + volumeHandle)
}

// CreateDriver creates the CSIDriver name with attachRequired true, so
// that the attach-detach controller makes VolumeAttachments for its
// volumes. One that exists already is left as it is.
func CreateDriver(ctx context.Context, client kubernetes.Interface, name string) error {
	attach := true
	driver := &storagev1.CSIDriver{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: storagev1.CSIDriverSpec{
			AttachRequired:       &attach,
			VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent},
		},
	}
	if _, err := client.StorageV1().CSIDrivers().Create(ctx, driver, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create CSIDriver %s: %w", name, err)
	}
	return nil
}

// PVName is the name of the PersistentVolume CreateVolumes makes for claim
// namespace/claim; it is also the volume's handle.
func PVName(namespace, claim string) string { return namespace + "-" + claim }

// CreateVolumes creates, for each claim name, a PersistentVolumeClaim in
// namespace (ReadWriteOnce, 1Gi, storageClassName "") and a CSI
// PersistentVolume of driver (PVName, Retain) bound to it in advance (the
// PV's claimRef and the claim's volumeName), so that no provisioner is
// needed: the PV binder controller marks both Bound. It returns the PVs.
func CreateVolumes(ctx context.Context, client kubernetes.Interface, driver, namespace string, claims ...string) ([]*corev1.PersistentVolume, error) {
	size := resource.MustParse("1Gi")
	noClass := ""
	rwo := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	var pvs []*corev1.PersistentVolume
	for _, claim := range claims {
		name := PVName(namespace, claim)
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
				AccessModes:                   rwo,
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				StorageClassName:              noClass,
				ClaimRef:                      &corev1.ObjectReference{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: namespace, Name: claim},
				PersistentVolumeSource: corev1.PersistentVolumeSource{
					CSI: &corev1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: name},
				},
			},
		}
		pv, err := client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("create PersistentVolume %s: %w", name, err)
		}
		pvs = append(pvs, pv)
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: claim, Namespace: namespace},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      rwo,
				StorageClassName: &noClass,
				VolumeName:       name,
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
			},
		}
		if _, err := client.CoreV1().PersistentVolumeClaims(namespace).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("create PersistentVolumeClaim %s/%s: %w", namespace, claim, err)
		}
	}
	return pvs, nil
}

// StatefulSetClaims are the names of the claims the StatefulSet controller
// makes from volumeClaimTemplate template of StatefulSet name for replicas
// replicas: <template>-<name>-<ordinal>.
func StatefulSetClaims(template, name string, replicas int) []string {
	claims := make([]string, replicas)
	for i := range claims {
		claims[i] = fmt.Sprintf("%s-%s-%d", template, name, i)
	}
	return claims
}

// ClaimTemplate is the name of the volumeClaimTemplate of NewStatefulSet.
const ClaimTemplate = "data"

// NewStatefulSet is a StatefulSet namespace/name of replicas pods
// (labelled app=name and WaitForAttachLabel "true", placed by nodeSelector,
// created in parallel), each mounting its own ReadWriteOnce claim of
// template ClaimTemplate at /data. Create it with CreateStatefulSet.
func NewStatefulSet(namespace, name string, replicas int32, nodeSelector map[string]string) *appsv1.StatefulSet {
	noClass := ""
	labels := map[string]string{"app": name}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            &replicas,
			Selector:            &metav1.LabelSelector{MatchLabels: labels},
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name, WaitForAttachLabel: "true"}},
				Spec: corev1.PodSpec{
					NodeSelector: nodeSelector,
					Containers: []corev1.Container{{
						Name:         "app",
						Image:        "registry.example/" + name + ":1",
						VolumeMounts: []corev1.VolumeMount{{Name: ClaimTemplate, MountPath: "/data"}},
					}},
				},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: ClaimTemplate},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					StorageClassName: &noClass,
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceStorage: resource.MustParse("1Gi"),
					}},
				},
			}},
		},
	}
}

// CreateStatefulSet creates the volumes of every claim sts's
// volumeClaimTemplates will ask for (CreateVolumes, driver), then sts. It
// returns the PVs, by ordinal within each template.
func CreateStatefulSet(ctx context.Context, client kubernetes.Interface, driver string, sts *appsv1.StatefulSet) ([]*corev1.PersistentVolume, error) {
	replicas := 1
	if sts.Spec.Replicas != nil {
		replicas = int(*sts.Spec.Replicas)
	}
	var pvs []*corev1.PersistentVolume
	for _, template := range sts.Spec.VolumeClaimTemplates {
		made, err := CreateVolumes(ctx, client, driver, sts.Namespace, StatefulSetClaims(template.Name, sts.Name, replicas)...)
		if err != nil {
			return nil, err
		}
		pvs = append(pvs, made...)
	}
	if _, err := client.AppsV1().StatefulSets(sts.Namespace).Create(ctx, sts, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("create StatefulSet %s/%s: %w", sts.Namespace, sts.Name, err)
	}
	return pvs, nil
}
