// Command kdra-cert-manager runs cert-manager's controller and CA injector, out of cluster, for
// the integration tests (CertManagerWebhookIT). cert-manager publishes its commands as Go modules
// of their own (cmd/controller, cmd/cainjector) that the module proxy does not serve; its main
// module, which it does serve, holds every controller. This is the small part of those commands
// that wires them up: the certificate controllers with the SelfSigned and CA issuers and the
// CertificateRequest approver (no ACME, Vault or Venafi), and the injector for webhook
// configurations. Built by integration-tests/scripts/build-cert-manager.sh.
//
//	kdra-cert-manager --kubeconfig FILE [--namespace NS]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	cmscheme "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/scheme"
	"github.com/cert-manager/cert-manager/pkg/controller"
	"github.com/cert-manager/cert-manager/pkg/controller/cainjector"
	"github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	crca "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	crselfsigned "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	"github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	"github.com/cert-manager/cert-manager/pkg/controller/issuers"
	"github.com/cert-manager/cert-manager/pkg/util"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
	"golang.org/x/sync/errgroup"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	kscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// What a Certificate from a SelfSigned or CA Issuer needs, in cert-manager's own controllers.
var controllers = []string{
	issuers.ControllerName, clusterissuers.ControllerName,
	trigger.ControllerName, keymanager.ControllerName, requestmanager.ControllerName,
	readiness.ControllerName, issuing.ControllerName, revisionmanager.ControllerName,
	approver.ControllerName, crselfsigned.CRControllerName, crca.CRControllerName,
}

func main() {
	// a flag set of its own: controller-runtime puts a --kubeconfig of its own on the default one
	flags := flag.NewFlagSet("kdra-cert-manager", flag.ExitOnError)
	kubeconfig := flags.String("kubeconfig", "", "the API server's kubeconfig")
	namespace := flags.String("cluster-resource-namespace", "cert-manager",
		"where ClusterIssuers' secrets live")
	klog.InitFlags(flags)
	_ = flags.Parse(os.Args[1:])
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	ctrl.SetLogger(klog.NewKlogr())
	if err := run(ctx, *kubeconfig, *namespace); err != nil {
		fmt.Fprintln(os.Stderr, "kdra-cert-manager:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig, clusterResourceNamespace string) error {
	g, ctx := errgroup.WithContext(ctx)
	factory, err := controller.NewContextFactory(ctx, controller.ContextOptions{
		Kubeconfig:         kubeconfig,
		KubernetesAPIQPS:   50,
		KubernetesAPIBurst: 100,
		IssuerOptions: controller.IssuerOptions{
			ClusterResourceNamespace: clusterResourceNamespace,
		},
		CertificateOptions: controller.CertificateOptions{
			CertificateRequestMinimumBackoffDuration: time.Second,
			CertificateRequestMaximumBackoffDuration: time.Minute,
		},
	})
	if err != nil {
		return err
	}
	base, err := factory.Build()
	if err != nil {
		return err
	}
	known := controller.Known()
	for _, name := range controllers {
		construct, ok := known[name]
		if !ok {
			return fmt.Errorf("controller %s is not registered", name)
		}
		c, err := construct(factory)
		if err != nil {
			return fmt.Errorf("controller %s: %w", name, err)
		}
		g.Go(func() error { return c.Run(2, ctx) })
	}
	base.SharedInformerFactory.Start(ctx.Done())
	base.KubeSharedInformerFactory.Start(ctx.Done())
	base.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())

	// the CA injector: the Certificate's CA into webhook configurations that ask for it
	restConfig, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	// as cert-manager's cainjector: its field manager in the server-side applies is named after
	// the user agent
	restConfig = util.RestConfigWithUserAgent(restConfig, "cainjector")
	scheme := runtime.NewScheme()
	utilruntime.Must(kscheme.AddToScheme(scheme))
	utilruntime.Must(cmscheme.AddToScheme(scheme))
	utilruntime.Must(admissionv1.AddToScheme(scheme))
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache:   cache.Options{ReaderFailOnMissingInformer: true},
		// as cert-manager's cainjector: Secrets are read directly, never all cached
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
	})
	if err != nil {
		return err
	}
	if err := cainjector.RegisterAllInjectors(ctx, mgr, cainjector.SetupOptions{
		EnableCertificatesDataSource: true,
		EnabledReconcilersFor: map[string]bool{
			cainjector.ValidatingWebhookConfigurationName: true,
			cainjector.MutatingWebhookConfigurationName:   true,
		},
	}); err != nil {
		return err
	}
	g.Go(func() error { return mgr.Start(ctx) })
	klog.InfoS("kdra-cert-manager started", "controllers", controllers)
	return g.Wait()
}
